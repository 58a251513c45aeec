package s3store

import (
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// ObjectHeaders go on every object the store writes: what a Thanos
// object storage configuration's put_user_metadata and sse_config ask for
// (for example X-Amz-Acl: bucket-owner-full-control, which a bucket in
// another account needs so that its owner can read the files). Empty
// fields are not sent.
type ObjectHeaders struct {
	ACL, StorageClass                                        string
	GrantRead, GrantReadACP, GrantWriteACP, GrantFullControl string
	CacheControl, ContentDisposition, ContentLanguage        string
	WebsiteRedirectLocation                                  string
	// Metadata is user metadata (x-amz-meta-), merged under the metadata
	// of each Put: the exporter's own keys (rows, config-fingerprint, ...)
	// win, because planning reads them back.
	Metadata map[string]string
	// SSEKMSEncryptionContext is the base64 JSON encryption context, only
	// with SSE aws:kms.
	SSEKMSEncryptionContext string
}

// merged is h.Metadata under meta, or meta itself when h has none.
func (h ObjectHeaders) merged(meta map[string]string) map[string]string {
	if len(h.Metadata) == 0 {
		return meta
	}
	out := maps.Clone(h.Metadata)
	maps.Copy(out, meta)
	return out
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}
