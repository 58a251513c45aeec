package cli

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/awsauth"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/objstorecfg"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/s3store"
)

// What OBJECT_STORE_CONFIG_FILE adds to the wiring; without a file each
// function returns what the variables alone give.

// staticKeys puts the file's access_key and secret_key, when it has them,
// in place of IRSA as the child credentials of in.
func staticKeys(cfg *config.Config, in *awsauth.Input) {
	f := cfg.ObjectStore()
	if f == nil {
		return
	}
	if ak, sk, token, ok := f.StaticKeys(); ok {
		in.Static = &aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk, SessionToken: token, Source: "OBJECT_STORE_CONFIG_FILE"}
		in.StaticSource = "OBJECT_STORE_CONFIG_FILE"
	}
}

// s3Client is the destination's S3 client: the file's region, addressing,
// retry count and TLS settings over the run's AWS configuration.
func s3Client(cfg *config.Config, id *awsauth.Identity) *s3.Client {
	f := cfg.ObjectStore()
	if f == nil || !f.IsS3() {
		return s3store.NewClient(id.Config)
	}
	cc := s3store.ClientConfig{Region: f.Region(), MaxAttempts: f.MaxAttempts()}
	switch f.Addressing() {
	case objstorecfg.LookupPath:
		cc.Addressing = s3store.AddressingPath
	case objstorecfg.LookupVirtualHosted:
		cc.Addressing = s3store.AddressingVirtualHosted
	}
	if t := cfg.ObjectStoreTLS(); t != nil {
		// Only this client gets the endpoint's TLS settings; STS and
		// Secrets Manager keep the system's roots.
		cc.HTTPClient = awsauth.NewHTTPClient(cfg.S3RequestTimeout.Duration(), timeoutSetting).
			WithTransportOptions(func(tr *http.Transport) { tr.TLSClientConfig = t.Clone() })
	}
	return cc.New(id.Config)
}

// objectHeaders are the file's put_user_metadata and KMS encryption
// context, for every object written.
func objectHeaders(cfg *config.Config) s3store.ObjectHeaders {
	f := cfg.ObjectStore()
	if f == nil || !f.IsS3() {
		return s3store.ObjectHeaders{}
	}
	h := f.Headers()
	return s3store.ObjectHeaders{
		ACL: h.ACL, StorageClass: h.StorageClass,
		GrantRead: h.GrantRead, GrantReadACP: h.GrantReadACP, GrantWriteACP: h.GrantWriteACP, GrantFullControl: h.GrantFullControl,
		CacheControl: h.CacheControl, ContentDisposition: h.ContentDisposition, ContentLanguage: h.ContentLanguage,
		WebsiteRedirectLocation: h.WebsiteRedirect,
		Metadata:                h.Metadata, SSEKMSEncryptionContext: f.KMSContext(),
	}
}

// settings is the destination's settings with their sources, for the
// start-up line.
func settings(cfg *config.Config) []string {
	var out []string
	for _, s := range cfg.Settings() {
		out = append(out, s.String())
	}
	return out
}
