package s3store

import (
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Defaults for Options. A Put of a seekable file reads its parts in place
// and holds no part buffers. A Put of any other stream holds at most
// Concurrency+1 pooled PartSize buffers, whatever the object's size
// (TestPutMemoryBounded), so the job fits a small pod limit while still
// sending two parts at a time.
const (
	DefaultPartSize    int64 = 8 << 20
	DefaultConcurrency       = 2
	// DefaultContentType is the IANA media type registered for Parquet.
	DefaultContentType = "application/vnd.apache.parquet"
	// DefaultChecksum is the flexible checksum sent with every PutObject and
	// UploadPart. CRC32 is what the SDK picks on its own, S3
	// accepts it as a composite checksum for multipart uploads, and MinIO
	// and the other common S3-compatible servers verify it.
	DefaultChecksum = types.ChecksumAlgorithmCrc32
)

// checksums are the algorithms S3 accepts for multipart uploads and the
// S3-compatible servers we test against verify.
var checksums = []types.ChecksumAlgorithm{
	types.ChecksumAlgorithmCrc32,
	types.ChecksumAlgorithmCrc32c,
	types.ChecksumAlgorithmCrc64nvme,
	types.ChecksumAlgorithmSha1,
	types.ChecksumAlgorithmSha256,
}

// Limits imposed by S3 on multipart parts.
const (
	minPartSize = 5 << 20
	maxPartSize = 5 << 30 // 5 GiB
	maxConc     = 64
	// maxMetadata is S3's limit on the total size of user-defined metadata
	// (keys plus values, as sent).
	maxMetadata = 2 << 10
)

// Server-side encryption modes accepted in Options.SSE.
const (
	SSENone = ""
	SSES3   = string(types.ServerSideEncryptionAes256)
	SSEKMS  = string(types.ServerSideEncryptionAwsKms)
)

// Options configure a Store. The zero value of every field but Bucket means
// "use the default".
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
	// buffer. 0 means DefaultPartSize; otherwise 5 MiB to 5 GiB.
	PartSize int64
	// Concurrency is how many parts of one object are sent at once. 0 means
	// DefaultConcurrency; otherwise 1 to 64.
	Concurrency int
	// Checksum is the flexible checksum algorithm for uploads. "" means
	// DefaultChecksum.
	Checksum types.ChecksumAlgorithm
	// ContentType of stored objects. "" means DefaultContentType.
	ContentType string
	// RequestTimeout and TimeoutSetting only word errors: the bound itself
	// is set on the HTTP client (awsauth), and a stalled call fails with
	// "no progress for <RequestTimeout> (<TimeoutSetting>)".
	RequestTimeout time.Duration
	TimeoutSetting string
	// Logger receives debug events per operation and warnings about
	// clean-up failures. nil discards them.
	Logger *slog.Logger
}

// Validate reports every invalid field. It has no side effects and does
// not apply defaults, so it can be called on user input at any time.
func (o Options) Validate() exporter.FieldErrors {
	var errs exporter.FieldErrors
	bad := func(field, value, format string, args ...any) {
		errs = append(errs, &exporter.FieldError{Field: field, Value: value, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case o.Bucket == "":
		bad("Bucket", "", "required")
	case exporter.BucketNameProblem(o.Bucket) != "":
		bad("Bucket", o.Bucket, "%s", exporter.BucketNameProblem(o.Bucket))
	}
	if o.ExpectedBucketOwner != "" && !exporter.IsAccountID(o.ExpectedBucketOwner) {
		bad("ExpectedBucketOwner", o.ExpectedBucketOwner, "accepted: empty or a 12-digit AWS account ID")
	}
	switch o.SSE {
	case SSENone, SSES3, SSEKMS:
	default:
		bad("SSE", o.SSE, "accepted: empty, %s, %s", SSES3, SSEKMS)
	}
	if o.SSEKMSKeyID != "" && o.SSE != SSEKMS {
		bad("SSEKMSKeyID", o.SSEKMSKeyID, "only valid with SSE %s", SSEKMS)
	}
	if o.Headers.SSEKMSEncryptionContext != "" && o.SSE != SSEKMS {
		bad("Headers.SSEKMSEncryptionContext", o.Headers.SSEKMSEncryptionContext, "only valid with SSE %s", SSEKMS)
	}
	if err := checkMetadata(o.Headers.Metadata); err != nil {
		bad("Headers.Metadata", "", "%v", err)
	}
	if o.PartSize != 0 && (o.PartSize < minPartSize || o.PartSize > maxPartSize) {
		bad("PartSize", fmt.Sprint(o.PartSize), "accepted: 0 (default %d) or %d to %d bytes", DefaultPartSize, minPartSize, int64(maxPartSize))
	}
	if o.Concurrency < 0 || o.Concurrency > maxConc {
		bad("Concurrency", fmt.Sprint(o.Concurrency), "accepted: 0 (default %d) or 1 to %d", DefaultConcurrency, maxConc)
	}
	if o.Checksum != "" && !slices.Contains(checksums, o.Checksum) {
		bad("Checksum", string(o.Checksum), "accepted: %v", checksums)
	}
	if strings.ContainsAny(o.ContentType, "\r\n") {
		bad("ContentType", o.ContentType, "must be a single-line media type")
	}
	return errs
}

// withDefaults fills in every zero field that has a default.
func (o Options) withDefaults() Options {
	if o.PartSize == 0 {
		o.PartSize = DefaultPartSize
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Checksum == "" {
		o.Checksum = DefaultChecksum
	}
	if o.ContentType == "" {
		o.ContentType = DefaultContentType
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

var metaKeyRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// checkMetadata rejects metadata S3 would refuse or silently mangle: keys
// that are not header tokens, and non-ASCII values (S3 returns those
// RFC 2047-encoded, so they would not read back as written).
func checkMetadata(meta map[string]string) error {
	total := 0
	for k, v := range meta {
		if !metaKeyRE.MatchString(k) {
			return fmt.Errorf("metadata key %q: accepted: letters, digits, '.', '_' and '-'", k)
		}
		for i := 0; i < len(v); i++ {
			if c := v[i]; c < 0x20 || c > 0x7e {
				return fmt.Errorf("metadata %q: value must be printable ASCII", k)
			}
		}
		total += len(k) + len(v)
	}
	if total > maxMetadata {
		return fmt.Errorf("metadata is %d bytes, S3 allows %d", total, maxMetadata)
	}
	return nil
}
