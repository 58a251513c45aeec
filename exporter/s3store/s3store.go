// Package s3store is the exporter's ObjectStore on Amazon S3 (and
// S3-compatible servers such as MinIO).
//
// Put accepts any io.Reader: the exporter hands it the day's finished spool
// file (seekable), while other callers may stream a body of unknown length.
// Either way memory is bounded by the part size and part concurrency, never
// by the object. Objects larger than one part go multipart, and a failed
// multipart upload is aborted, so an object appears whole or not at all
// (CONTRACT §3).
package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

var _ exporter.ObjectStore = (*Store)(nil)

// abortTimeout bounds the clean-up of a failed multipart upload. It runs on
// a context detached from the caller's, because the usual reason for the
// failure is that the caller's context was cancelled.
const abortTimeout = 30 * time.Second

// Store is an exporter.ObjectStore on one S3 bucket. It is safe for
// concurrent use.
type Store struct {
	client   *s3.Client
	uploader *manager.Uploader
	opts     Options
	log      *slog.Logger
	// callOpts go on every request, including the ones the upload manager
	// makes on our behalf; getOpts are callOpts for GetObject.
	callOpts, getOpts []func(*s3.Options)
}

// New returns a Store writing to opts.Bucket through client. Build client
// with NewClient so that custom endpoints get path-style addressing.
func New(client *s3.Client, opts Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("s3store: nil client")
	}
	if errs := opts.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("s3store: invalid options: %w", errs)
	}
	opts = opts.withDefaults()
	s := &Store{client: client, opts: opts, log: opts.Logger}
	if opts.ExpectedBucketOwner != "" {
		s.callOpts = append(s.callOpts, withExpectedBucketOwner(opts.ExpectedBucketOwner))
	}
	// A separate slice, so concurrent Opens never append into a shared one.
	s.getOpts = append(slices.Clone(s.callOpts), quietMultipartChecksum)
	// feature/s3/manager is marked deprecated in favour of
	// feature/s3/transfermanager, which is not in go.mod yet; the manager
	// is still maintained and does what we need.
	s.uploader = manager.NewUploader(client, func(u *manager.Uploader) {
		u.PartSize = opts.PartSize
		u.Concurrency = opts.Concurrency
		// Abort on error: S3 bills for the parts of an unfinished upload,
		// and CONTRACT §3 forbids leaving one behind.
		u.LeavePartsOnError = false
		u.ClientOptions = s.callOpts
	})
	return s, nil
}

// Bucket returns the bucket the store writes to.
func (s *Store) Bucket() string { return s.opts.Bucket }

// owner returns the ExpectedBucketOwner request field, nil when disabled.
func (s *Store) owner() *string {
	if s.opts.ExpectedBucketOwner == "" {
		return nil
	}
	return aws.String(s.opts.ExpectedBucketOwner)
}

// List calls fn for each key under prefix that sorts after startAfter, in
// S3's lexical (UTF-8 byte) order, one ListObjectsV2 page at a time.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(exporter.ObjectInfo) error) error {
	in := &s3.ListObjectsV2Input{
		Bucket:              aws.String(s.opts.Bucket),
		ExpectedBucketOwner: s.owner(),
	}
	if prefix != "" {
		in.Prefix = aws.String(prefix)
	}
	if startAfter != "" {
		in.StartAfter = aws.String(startAfter)
	}
	pages := s3.NewListObjectsV2Paginator(s.client, in)
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx, s.callOpts...)
		if err != nil {
			return fmt.Errorf("s3: list %s: %w", prefix, err)
		}
		for _, obj := range page.Contents {
			n++
			if err := fn(exporter.ObjectInfo{Key: aws.ToString(obj.Key), Size: aws.ToInt64(obj.Size)}); err != nil {
				return err
			}
		}
	}
	s.log.DebugContext(ctx, "s3 list", "bucket", s.opts.Bucket, "prefix", prefix, "start_after", startAfter, "keys", n)
	return nil
}

// Put streams r to key. Bodies up to PartSize go in one PutObject; larger
// ones go multipart with PartSize parts, Concurrency at a time. When r fails
// or ctx ends, the multipart upload is aborted and no object appears; an
// existing object under key is left untouched. Memory does not depend on
// the object's size: see the note on DefaultPartSize.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, meta map[string]string) error {
	if err := checkMetadata(meta); err != nil {
		return fmt.Errorf("s3: put %s: %w", key, err)
	}
	start := time.Now()
	body := &streamReader{ctx: ctx, r: r}
	var upload io.Reader = body
	if f, ok := r.(readerAtSeeker); ok {
		// A spooled day file goes to the uploader as is: it then reads each
		// part as a section of the file instead of copying it into a
		// PartSize buffer, so memory does not grow with the day, and a
		// retried part is re-read from disk. The SDK honours ctx itself.
		if size, err := f.Seek(0, io.SeekEnd); err == nil {
			if _, err := f.Seek(0, io.SeekStart); err == nil {
				upload, body.n = f, size
			}
		}
	}
	in := &s3.PutObjectInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		Body:                upload,
		ContentType:         aws.String(s.opts.ContentType),
		Metadata:            meta,
		ExpectedBucketOwner: s.owner(),
		ChecksumAlgorithm:   s.opts.Checksum,
	}
	if s.opts.SSE != "" {
		in.ServerSideEncryption = types.ServerSideEncryption(s.opts.SSE)
	}
	if s.opts.SSEKMSKeyID != "" {
		in.SSEKMSKeyId = aws.String(s.opts.SSEKMSKeyID)
	}
	out, err := s.uploader.Upload(ctx, in)
	if err != nil {
		err = s.cleanUp(ctx, key, err)
		s.log.DebugContext(ctx, "s3 put failed", "bucket", s.opts.Bucket, "key", key, "bytes_read", body.n, "error", err)
		return fmt.Errorf("s3: put %s: %w", key, err)
	}
	s.log.DebugContext(ctx, "s3 put", "bucket", s.opts.Bucket, "key", key, "bytes", body.n,
		"parts", max(1, len(out.CompletedParts)), "duration", time.Since(start))
	return nil
}

// cleanUp aborts the multipart upload behind a failed Upload. The upload
// manager aborts too, but on the caller's context: when that context was
// cancelled its abort never leaves the process and the parts stay billed.
// A second abort after a successful first one answers NoSuchUpload, which
// is fine.
func (s *Store) cleanUp(ctx context.Context, key string, uploadErr error) error {
	var mf manager.MultiUploadFailure
	if !errors.As(uploadErr, &mf) || mf.UploadID() == "" {
		// Single PutObject, or CreateMultipartUpload itself failed: there is
		// no upload ID to abort. (A CreateMultipartUpload whose reply is lost
		// leaves an upload we cannot name; the bucket's
		// AbortIncompleteMultipartUpload lifecycle rule is the backstop.)
		return uploadErr
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	_, err := s.client.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		UploadId:            aws.String(mf.UploadID()),
		ExpectedBucketOwner: s.owner(),
	}, s.callOpts...)
	var gone *types.NoSuchUpload
	if err == nil || errors.As(err, &gone) || apiCode(err) == "NoSuchUpload" {
		return uploadErr
	}
	s.log.WarnContext(ctx, "s3: could not abort multipart upload; its parts stay until a lifecycle rule removes them",
		"bucket", s.opts.Bucket, "key", key, "upload_id", mf.UploadID(), "error", err)
	return errors.Join(uploadErr, fmt.Errorf("abort upload %s: %w", mf.UploadID(), err))
}

// Open returns the object's body. The caller must close it. A missing key
// gives an error wrapping exporter.ErrNotExist.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		ExpectedBucketOwner: s.owner(),
		// Ask for the stored checksum so the SDK verifies the body as it is
		// read (for single-part objects; S3 cannot give a whole-object
		// checksum for composite multipart ones).
		ChecksumMode: types.ChecksumModeEnabled,
	}, s.getOpts...)
	if err != nil {
		var nsk *types.NoSuchKey
		if errors.As(err, &nsk) || apiCode(err) == "NoSuchKey" {
			return nil, fmt.Errorf("s3: open %s: %w", key, exporter.ErrNotExist)
		}
		return nil, fmt.Errorf("s3: open %s: %w", key, err)
	}
	return out.Body, nil
}

// Delete removes key. S3 answers success for a missing key, as the
// interface requires.
func (s *Store) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		ExpectedBucketOwner: s.owner(),
	}, s.callOpts...)
	if err != nil {
		return fmt.Errorf("s3: delete %s: %w", key, err)
	}
	s.log.DebugContext(ctx, "s3 delete", "bucket", s.opts.Bucket, "key", key)
	return nil
}

// Head returns the object's size, ETag and user metadata with one
// HeadObject. A missing key gives an error wrapping exporter.ErrNotExist.
// S3 returns user metadata keys in lower case, whatever Put was given.
func (s *Store) Head(ctx context.Context, key string) (exporter.ObjectAttrs, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		ExpectedBucketOwner: s.owner(),
	}, s.callOpts...)
	if err != nil {
		// HEAD responses have no body, so S3 cannot say NoSuchKey: a
		// missing key is a bare 404, which the SDK reports as NotFound.
		var nf *types.NotFound
		var nsk *types.NoSuchKey
		if errors.As(err, &nf) || errors.As(err, &nsk) || apiCode(err) == "NotFound" || apiCode(err) == "NoSuchKey" {
			return exporter.ObjectAttrs{}, fmt.Errorf("s3: head %s: %w", key, exporter.ErrNotExist)
		}
		return exporter.ObjectAttrs{}, fmt.Errorf("s3: head %s: %w", key, err)
	}
	meta := make(map[string]string, len(out.Metadata))
	for k, v := range out.Metadata {
		meta[strings.ToLower(k)] = v
	}
	return exporter.ObjectAttrs{Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), Metadata: meta}, nil
}

// quietMultipartChecksum silences the SDK's warning that it skipped
// validating a composite (multipart) checksum: every big day file has one,
// so the warning would fire on every read and mean nothing.
func quietMultipartChecksum(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true }

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// streamReader hands the body to the upload manager. It deliberately hides
// Seek, ReadAt and WriteTo, so the manager always takes its bounded
// streaming path, and it checks ctx between reads so that a cancelled Put
// stops reading promptly even while the producer keeps writing.
// readerAtSeeker is what the upload manager needs to read parts in place.
type readerAtSeeker interface {
	io.ReaderAt
	io.ReadSeeker
}

type streamReader struct {
	ctx context.Context
	r   io.Reader
	n   int64
}

func (s *streamReader) Read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	return n, err
}
