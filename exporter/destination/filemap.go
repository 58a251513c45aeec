package destination

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/s3store"
)

// What a validated File means: each method maps a row of docs/object-store-config.md's table.

// IsS3 reports whether the file is type S3 (else FILESYSTEM).
func (f *File) IsS3() bool { return strings.EqualFold(f.Type, TypeS3) }

// KeyPrefix is prefix as S3_PREFIX spells it: objstore trims the slashes and joins prefix
// and name with one, so "a/b" and "/a/b/" are "a/b/".
func (f *File) KeyPrefix() string {
	if p := strings.Trim(f.Prefix, "/"); p != "" {
		return p + "/"
	}
	return ""
}

// EndpointURL is the custom endpoint as AWS_ENDPOINT_URL_S3 would say it (http:// with
// insecure: true), without the trailing "/" minio-go ignores too. An AWS endpoint minio-go
// replaces by the bucket's regional one (s3.amazonaws.com, s3.<region>.amazonaws.com,
// dual-stack, China) gives "": the AWS SDK resolves it from the region. FIPS and
// PrivateLink hosts, which minio-go keeps, stay (endpoint.go).
func (f *File) EndpointURL() string {
	e := strings.TrimSuffix(f.S3.Endpoint, "/")
	if !f.IsS3() || e == "" || (!f.S3.Insecure && sdkResolves(endpointHost(f.S3.Endpoint))) {
		return ""
	}
	return f.S3.scheme() + e
}

func (c *S3) scheme() string {
	if c.Insecure {
		return "http://"
	}
	return "https://"
}

// Region is region, else the endpoint host's as minio-go reads it (s3utils.GetRegionFromURL:
// regional, FIPS, dual-stack, China and PrivateLink forms; none for s3.amazonaws.com and
// s3-external-1.amazonaws.com). "" leaves STSRegion's.
func (f *File) Region() string {
	if !f.IsS3() {
		return f.S3.Region
	}
	return f.S3.region()
}

func (c *S3) region() string { return cmp.Or(c.Region, regionOfHost(endpointHost(c.Endpoint))) }

// Addressing is bucket_lookup_type, auto resolved as minio-go does
// (s3utils.IsVirtualHostSupported): virtual-hosted for AWS, Google Cloud Storage and Alibaba
// OSS hosts unless a dotted bucket is on https, else path-style; auto for a non-S3 file.
func (f *File) Addressing() LookupType {
	switch lt := f.S3.BucketLookupType; {
	case lt == LookupPath || lt == LookupVirtualHosted:
		return lt
	case !f.IsS3() || f.S3.Endpoint == "":
		return LookupAuto
	case virtualHostSupported(endpointHost(f.S3.Endpoint), !f.S3.Insecure, f.S3.Bucket):
		return LookupVirtualHosted
	}
	return LookupPath
}

// SSE is sse_config as S3_SSE and S3_SSE_KMS_KEY_ID spell it.
func (f *File) SSE() (mode, kmsKeyID string) {
	switch f.S3.SSEConfig.Type {
	case SSES3:
		return "AES256", ""
	case SSEKMS:
		return "aws:kms", f.S3.SSEConfig.KMSKeyID
	}
	return "", ""
}

// KMSContext is kms_encryption_context as the x-amz-server-side-encryption-context header
// wants it (base64 of the JSON object), "" when empty or not SSE-KMS.
func (f *File) KMSContext() string {
	ctx := f.S3.SSEConfig.KMSEncryptionContext
	if f.S3.SSEConfig.Type != SSEKMS || len(ctx) == 0 {
		return ""
	}
	b, _ := json.Marshal(ctx) // a map of strings always marshals
	return base64.StdEncoding.EncodeToString(b)
}

// StaticKeys are access_key, secret_key and session_token; ok is false without them
// (IRSA, the default chain, applies).
func (f *File) StaticKeys() (accessKey, secretKey, sessionToken string, ok bool) {
	if f.S3.AccessKey == "" {
		return "", "", "", false
	}
	return f.S3.AccessKey, f.S3.SecretKey, f.S3.SessionToken, true
}

// PartSize is part_size in bytes when set, else 0 (the exporter's default, not objstore's
// 64 MiB). disable_multipart is S3's largest single PutObject: a day file in one request.
func (f *File) PartSize() int64 {
	switch {
	case f.S3.DisableMultipart:
		return maxPartSize
	case f.IsSet("config.part_size"):
		return int64(f.S3.PartSize)
	}
	return 0
}

// MaxAttempts is max_retries: minio-go's count of attempts, the AWS SDK's RetryMaxAttempts.
// 0 (or less) leaves the SDK's default.
func (f *File) MaxAttempts() int { return max(f.S3.MaxRetries, 0) }

// Headers splits put_user_metadata as minio-go v7.0.93 sends it (api-put-object.go
// PutObjectOptions.Header, after objstore's NewBucketWithConfig moved X-Amz-Storage-Class
// to StorageClass): X-Amz-Acl, X-Amz-Grant-* and X-Amz-Storage-Class as headers,
// X-Amz-Meta-<k> and any other key as user metadata. Beyond objstore, Cache-Control,
// Content-Disposition, Content-Language and X-Amz-Website-Redirect-Location go as headers:
// minio-go's PutObjectOptions.validate refuses them as metadata, so objstore fails every
// upload. Call it on a validated File.
func (f *File) Headers() s3store.ObjectHeaders {
	h := s3store.ObjectHeaders{Metadata: map[string]string{}}
	for k, v := range f.S3.PutUserMetadata {
		lk := strings.ToLower(k)
		switch field := headerField(&h, lk); {
		case field != nil:
			*field = v
		case strings.HasPrefix(lk, "x-amz-meta-"):
			h.Metadata[k[len("x-amz-meta-"):]] = v
		default:
			h.Metadata[k] = v
		}
	}
	return h
}

// headerField is the field of h the lower-case key lk sets, nil for user metadata.
func headerField(h *s3store.ObjectHeaders, lk string) *string {
	return map[string]*string{
		"x-amz-acl": &h.ACL, "x-amz-storage-class": &h.StorageClass,
		"x-amz-grant-read": &h.GrantRead, "x-amz-grant-read-acp": &h.GrantReadACP,
		"x-amz-grant-write-acp": &h.GrantWriteACP, "x-amz-grant-full-control": &h.GrantFullControl,
		"cache-control": &h.CacheControl, "content-disposition": &h.ContentDisposition,
		"content-language": &h.ContentLanguage, "x-amz-website-redirect-location": &h.WebsiteRedirectLocation,
	}[lk]
}

// TLS is http_config's TLS settings, nil when none. It reads ca_file, cert_file and
// key_file, so it runs at load and a bad file is a configuration error. Verification is off
// exactly when http_config.insecure_skip_verify is: objstore's exthttp.DefaultTransport sets
// the flag from it, over tls_config.insecure_skip_verify, which has no effect (Notices).
func (f *File) TLS() (*tls.Config, error) {
	hc := f.S3.HTTPConfig
	tc := hc.TLSConfig
	tc.InsecureSkipVerify = false
	if !f.IsS3() || (!hc.InsecureSkipVerify && tc == (TLSConfig{})) {
		return nil, nil
	}
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         tc.ServerName,
		InsecureSkipVerify: hc.InsecureSkipVerify, // the user's explicit choice; config warns
	}
	if tc.CAFile != "" {
		pem, err := os.ReadFile(tc.CAFile)
		if err != nil {
			return nil, fmt.Errorf("config.http_config.tls_config.ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("config.http_config.tls_config.ca_file: %s holds no PEM certificate", tc.CAFile)
		}
		cfg.RootCAs = pool
	}
	if tc.CertFile != "" && tc.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(tc.CertFile, tc.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("config.http_config.tls_config.cert_file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Notices are a log line per field set that is accepted without effect.
func (f *File) Notices() []string {
	var out []string
	note := func(path, why string) {
		if f.IsSet(path) {
			out = append(out, fmt.Sprintf("OBJECT_STORE_CONFIG_FILE %s has no effect: %s", path, why))
		}
	}
	note("config.disable_dualstack", "the exporter does not use dual-stack endpoints unless AWS_USE_DUALSTACK_ENDPOINT is set")
	if f.S3.AWSSDKAuth {
		note("config.aws_sdk_auth", "the AWS SDK's credential chain (IRSA) is already the exporter's default")
	}
	note("config.trace", "set LOG_LEVEL=debug for a line per S3 call")
	if hc := f.S3.HTTPConfig; hc.TLSConfig.InsecureSkipVerify && !hc.InsecureSkipVerify {
		note("config.http_config.tls_config.insecure_skip_verify",
			"objstore's S3 client takes http_config.insecure_skip_verify only, so the certificate is still verified")
	}
	note("config.send_content_md5", "uploads carry a CRC32 checksum, which S3 verifies, instead of Content-MD5")
	for _, k := range []string{"idle_conn_timeout", "response_header_timeout", "tls_handshake_timeout", "expect_continue_timeout",
		"max_idle_conns", "max_idle_conns_per_host", "max_conns_per_host", "disable_compression"} {
		note("config.http_config."+k, "S3_REQUEST_TIMEOUT bounds every S3 call, and the exporter's connections are few")
	}
	if f.S3.SSEConfig.Type != SSEKMS {
		note("config.sse_config.kms_encryption_context", "only used with type SSE-KMS")
		note("config.sse_config.kms_key_id", "only used with type SSE-KMS")
	}
	note("config.sse_config.encryption_key", "only used with type SSE-C, which the exporter refuses")
	if f.S3.AccessKey == "" {
		note("config.session_token", "only used with access_key and secret_key")
	}
	return out
}
