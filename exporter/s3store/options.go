package s3store

import (
	"cmp"
	"log/slog"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Defaults for Options. A Put of a seekable file reads parts in place; any other stream
// holds at most Concurrency+1 PartSize buffers (TestPutMemoryBounded), so the job fits a
// small pod limit while sending two parts at a time.
const (
	DefaultConcurrency = 2
	// DefaultContentType is the IANA media type registered for Parquet.
	DefaultContentType = "application/vnd.apache.parquet"
	// DefaultChecksum goes with every PutObject and UploadPart: the SDK's own pick, S3 takes
	// it as a multipart composite, and MinIO and the common S3-compatible servers verify it.
	DefaultChecksum = types.ChecksumAlgorithmCrc32
)

// Server-side encryption modes accepted in Options.SSE.
const (
	SSES3  = string(types.ServerSideEncryptionAes256)
	SSEKMS = string(types.ServerSideEncryptionAwsKms)
)

// Options configure a Store; a zero field but Bucket means the default. The store trusts
// them: package destination checks the user's settings.
type Options struct {
	Bucket string // required
	// ExpectedBucketOwner, sent on every request when set, makes S3 refuse a bucket
	// re-created by another account under the same name (bucket sniping).
	ExpectedBucketOwner string
	// SSE is "" (the bucket's default), SSES3 or SSEKMS.
	SSE string
	// SSEKMSKeyID is the KMS key ID or ARN, with SSEKMS; "" is the account's aws/s3 key.
	SSEKMSKeyID string
	Headers     ObjectHeaders
	// PartSize is the multipart part and buffer size (S3_PART_SIZE_MIB), required for Put.
	PartSize    int64
	Concurrency int // parts of one object sent at once
	Checksum    types.ChecksumAlgorithm
	ContentType string
	Logger      *slog.Logger // debug events and clean-up warnings
}

func (o Options) withDefaults() Options {
	o.Concurrency = cmp.Or(o.Concurrency, DefaultConcurrency)
	o.Checksum = cmp.Or(o.Checksum, DefaultChecksum)
	o.ContentType = cmp.Or(o.ContentType, DefaultContentType)
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	return o
}

// ObjectHeaders go on every object written, from a Thanos configuration's
// put_user_metadata and sse_config (e.g. X-Amz-Acl: bucket-owner-full-control, so another
// account's bucket owner can read the files). Empty fields are not sent.
type ObjectHeaders struct {
	ACL, StorageClass                                        string
	GrantRead, GrantReadACP, GrantWriteACP, GrantFullControl string
	CacheControl, ContentDisposition, ContentLanguage        string
	WebsiteRedirectLocation                                  string
	// Metadata is merged under each Put's: the exporter's keys (rows, config-fingerprint,
	// ...) win, because planning reads them back.
	Metadata map[string]string
	// SSEKMSEncryptionContext is the base64 JSON encryption context, with SSEKMS only.
	SSEKMSEncryptionContext string
}

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
