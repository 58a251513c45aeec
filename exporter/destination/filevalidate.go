package destination

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/s3store"
)

// Validate reports every refused value, one error per field path
// ("config.sse_config.type"). It reads no file (TLS reads ca_file, cert_file).
func (f *File) Validate() exporter.FieldErrors {
	var errs exporter.FieldErrors
	bad := func(field, value, format string, args ...any) {
		errs = append(errs, &exporter.FieldError{Field: field, Value: value, Msg: fmt.Sprintf(format, args...)})
	}
	switch t := strings.ToUpper(f.Type); {
	case t == TypeS3:
		f.S3.validate(bad)
	case t == TypeFilesystem:
		if f.FS.Directory == "" {
			bad("config.directory", "", "required with type FILESYSTEM (the directory OUTPUT_DIR would name)")
		}
	case t == "":
		bad("type", "", "required: S3 (or FILESYSTEM for a local directory)")
	case slices.Contains(otherTypes, t):
		bad("type", f.Type, "type %s is not supported: the exporter writes to S3 or S3-compatible stores (type S3), or to a local directory (FILESYSTEM)", f.Type)
	default:
		bad("type", f.Type, "unknown type; accepted: S3, FILESYSTEM")
	}
	if msg := prefixProblem(f.KeyPrefix()); msg != "" {
		bad("prefix", f.Prefix, "%s (objstore trims the slashes around it)", msg)
	}
	return errs
}

type badFn = func(field, value, format string, args ...any)

func (c *S3) validate(bad badFn) {
	if c.Bucket != "" {
		if msg := exporter.BucketNameProblem(c.Bucket); msg != "" {
			bad("config.bucket", c.Bucket, "%s", msg)
		} else {
			c.validateAccessPoint(bad)
		}
	}
	switch {
	case c.Endpoint == "":
		// objstore refuses it too ("no s3 endpoint in config file").
		bad("config.endpoint", "", "required: s3.amazonaws.com (or s3.<region>.amazonaws.com) for AWS, host[:port] for an S3-compatible store")
	case endpointProblem(c.Endpoint) != "":
		bad("config.endpoint", c.Endpoint, "%s", endpointProblem(c.Endpoint))
	}
	c.validateCredentials(bad)
	if c.SignatureV2 {
		bad("config.signature_version2", "true", "Signature Version 2 is refused: S3 deprecated it and the AWS SDK signs with Version 4 only; remove it or set false")
	}
	switch c.ListObjectsVersion {
	case "", "v2":
	case "v1":
		bad("config.list_objects_version", "v1", "refused: the exporter lists with ListObjectsV2 only; remove it or set v2")
	default:
		bad("config.list_objects_version", c.ListObjectsVersion, "accepted: v1, v2")
	}
	if msg := partSizeProblem(int64(c.PartSize)); msg != "" {
		bad("config.part_size", fmt.Sprint(c.PartSize), "%s", msg)
	}
	if c.STSEndpoint != "" && !exporter.IsBaseURL(c.STSEndpoint) {
		bad("config.sts_endpoint", c.STSEndpoint, "accepted: %s", exporter.BaseURLAccepted)
	}
	c.SSEConfig.validate(bad)
	validateMetadata(c.PutUserMetadata, bad)
	checkMetadataSize(c.PutUserMetadata, bad)
	tc := c.HTTPConfig.TLSConfig
	if (tc.CertFile == "") != (tc.KeyFile == "") {
		bad("config.http_config.tls_config.cert_file", tc.CertFile, "cert_file and key_file go together (key_file %q)", tc.KeyFile)
	}
}

func (c *S3) validateCredentials(bad badFn) {
	switch {
	case c.AWSSDKAuth && c.AccessKey != "":
		bad("config.aws_sdk_auth", "true", "aws_sdk_auth and access_key are mutually exclusive")
	case c.AccessKey != "" && c.SecretKey == "":
		bad("config.secret_key", "", "required with access_key (or remove both to use IRSA)")
	case c.AccessKey == "" && c.SecretKey != "":
		bad("config.access_key", "", "required with secret_key (or remove both to use IRSA)")
	}
}

func (s *SSEConfig) validate(bad badFn) {
	switch s.Type {
	case "", SSES3:
	case SSEKMS:
		if s.KMSKeyID == "" {
			bad("config.sse_config.kms_key_id", "", "required with type SSE-KMS")
		}
	case SSEC:
		bad("config.sse_config.type", SSEC, "SSE-C is refused: every later read (planning, the report, Athena) would need the customer key; use SSE-S3 or SSE-KMS")
	default:
		bad("config.sse_config.type", s.Type, "accepted: SSE-S3, SSE-KMS")
	}
}

// Encryption types as objstore spells them.
const (
	SSES3  = "SSE-S3"
	SSEKMS = "SSE-KMS"
	SSEC   = "SSE-C"
)

// headerKeRE is a put_user_metadata key: S3 keeps metadata names as HTTP header names, and
// these characters survive every tool that lists them. minio-go refuses a non-token key
// (a space, ':') only when it uploads, so objstore takes such a file and fails every upload.
var headerKeRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// cannedACLs are S3's canned ACLs for objects.
var cannedACLs = []string{"private", "public-read", "public-read-write", "authenticated-read", "aws-exec-read", "bucket-owner-read", "bucket-owner-full-control"}

// refusedHeaders are headers put_user_metadata may not set, and why.
var refusedHeaders = map[string]string{
	"content-type":                        "the exporter sets the Parquet media type",
	"content-encoding":                    "the object is a Parquet file, not an encoded body",
	"content-length":                      "set per request",
	"content-md5":                         "the exporter sends a CRC32 checksum",
	"expires":                             "not supported; use a bucket lifecycle rule",
	"x-amz-metadata-directive":            "only meaningful on a copy",
	"x-amz-replication-status":            "set by S3",
	"x-amz-object-lock-mode":              "Object Lock is not supported by the exporter",
	"x-amz-object-lock-retain-until-date": "Object Lock is not supported by the exporter",
}

func validateMetadata(m map[string]string, bad badFn) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		field, v, lk := "config.put_user_metadata."+k, m[k], strings.ToLower(k)
		switch {
		case !headerKeRE.MatchString(k):
			bad(field, v, "a metadata key is letters, digits, '.', '_' and '-'")
		case refusedHeaders[lk] != "":
			bad(field, v, "refused: %s", refusedHeaders[lk])
		case strings.HasPrefix(lk, "x-amz-server-side-encryption"):
			bad(field, v, "refused: set encryption with sse_config")
		case strings.HasPrefix(lk, "x-amz-checksum-"), strings.HasPrefix(lk, "x-minio-"):
			bad(field, v, "refused: the exporter sets its own checksum and MinIO headers")
		case lk == "x-amz-acl" && !slices.Contains(cannedACLs, v):
			bad(field, v, "accepted: a canned ACL, one of %s", strings.Join(cannedACLs, ", "))
		case strings.HasPrefix(lk, "x-amz-grant-") && headerField(&s3store.ObjectHeaders{}, lk) == nil:
			bad(field, v, "accepted grants: X-Amz-Grant-Read, X-Amz-Grant-Read-Acp, X-Amz-Grant-Write-Acp, X-Amz-Grant-Full-Control")
		case lk == "x-amz-meta-":
			bad(field, v, "an X-Amz-Meta- key needs a name after the prefix")
		case strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r > 0x7e }):
			bad(field, v, "the value must be printable ASCII (S3 would return other bytes encoded)")
		}
	}
}

// maxMetadata is S3's limit on an object's user metadata, keys and values as sent:
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingMetadata.html
const maxMetadata = 2 << 10

func checkMetadataSize(m map[string]string, bad badFn) {
	n := 0
	for k, v := range (&File{S3: S3{PutUserMetadata: m}}).Headers().Metadata {
		n += len(k) + len(v)
	}
	if n > maxMetadata {
		bad("config.put_user_metadata", fmt.Sprint(n), "%d bytes of user metadata; S3 allows %d per object, the exporter's own keys included", n, maxMetadata)
	}
}
