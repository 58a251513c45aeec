package s3store

import (
	"cmp"
	"log/slog"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Defaults for Options. A Put of a seekable file reads its parts in place
// and holds no part buffers. A Put of any other stream holds at most
// Concurrency+1 pooled PartSize buffers, whatever the object's size
// (TestPutMemoryBounded), so the job fits a small pod limit while still
// sending two parts at a time.
const (
	DefaultConcurrency = 2
	// DefaultContentType is the IANA media type registered for Parquet.
	DefaultContentType = "application/vnd.apache.parquet"
	// DefaultChecksum is the flexible checksum sent with every PutObject and
	// UploadPart. CRC32 is what the SDK picks on its own, S3
	// accepts it as a composite checksum for multipart uploads, and MinIO
	// and the other common S3-compatible servers verify it.
	DefaultChecksum = types.ChecksumAlgorithmCrc32
)

// Server-side encryption modes accepted in Options.SSE.
const (
	SSES3  = string(types.ServerSideEncryptionAes256)
	SSEKMS = string(types.ServerSideEncryptionAwsKms)
)

// Options configure a Store. The zero value of every field but Bucket means
// "use the default". The store trusts them: the user's settings are
// checked once, at configuration time, by package destination.
type Options struct {
	// Bucket is the destination bucket. Required.
	Bucket string
	// ExpectedBucketOwner is the 12-digit account that must own Bucket. When
	// set it is sent on every request, so that a bucket re-created by another
	// account under the same name (bucket sniping) is refused by S3 instead
	// of receiving cost data.
	ExpectedBucketOwner string
	// SSE is "", "AES256" (SSE-S3) or "aws:kms" (SSE-KMS). Empty leaves the
	// bucket's default encryption in charge.
	SSE string
	// SSEKMSKeyID is the KMS key ID or ARN, only with SSE "aws:kms". Empty
	// means the account's aws/s3 key.
	SSEKMSKeyID string
	// Headers go on every object written (Put); see ObjectHeaders.
	Headers ObjectHeaders
	// PartSize is the multipart part size and the size of each upload
	// buffer, required for Put. The destination gives it, its default and
	// S3's limits (S3_PART_SIZE_MIB); a store that only reads needs none.
	PartSize int64
	// Concurrency is how many parts of one object are sent at once. 0 means
	// DefaultConcurrency.
	Concurrency int
	// Checksum is the flexible checksum algorithm for uploads. "" means
	// DefaultChecksum.
	Checksum types.ChecksumAlgorithm
	// ContentType of stored objects. "" means DefaultContentType.
	ContentType string
	// Logger receives debug events per operation and warnings about
	// clean-up failures. nil discards them.
	Logger *slog.Logger
}

// withDefaults fills in every zero field that has a default.
func (o Options) withDefaults() Options {
	o.Concurrency = cmp.Or(o.Concurrency, DefaultConcurrency)
	o.Checksum = cmp.Or(o.Checksum, DefaultChecksum)
	o.ContentType = cmp.Or(o.ContentType, DefaultContentType)
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	return o
}

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
