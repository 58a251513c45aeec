// Package s3store is the exporter's ObjectStore on Amazon S3 (and S3-compatible servers
// such as MinIO).
//
// Put takes any io.Reader: the day's spool file (seekable), or a stream of unknown length.
// Uploads are our own PutObject or multipart calls (upload.go), not the SDK's upload
// manager, which is deprecated and cannot put conditional-write headers on
// CompleteMultipartUpload. A failed multipart upload is aborted, so an object appears whole
// or not at all (CONTRACT §3); the next run aborts a killed process's uploads (AbortStale).
package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

var (
	_ exporter.ObjectStore   = (*Store)(nil)
	_ exporter.UploadJanitor = (*Store)(nil)
	_ exporter.RangeOpener   = (*Store)(nil)
)

// abortTimeout bounds the clean-up of a failed multipart upload, on a context detached
// from the caller's, whose cancellation is the usual cause of the failure.
const abortTimeout = 30 * time.Second

// Store is an exporter.ObjectStore on one S3 bucket, safe for concurrent use.
type Store struct {
	client *s3.Client
	opts   Options
	log    *slog.Logger
	// callOpts go on every request; getOpts are callOpts for GetObject.
	callOpts, getOpts []func(*s3.Options)
}

// New returns a Store on opts.Bucket. Build client with ClientConfig.New, so custom
// endpoints get path-style addressing.
func New(client *s3.Client, opts Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("s3store: nil client")
	}
	if opts.Bucket == "" {
		return nil, errors.New("s3store: no bucket")
	}
	opts = opts.withDefaults()
	s := &Store{client: client, opts: opts, log: opts.Logger}
	if opts.ExpectedBucketOwner != "" {
		s.callOpts = append(s.callOpts, withExpectedBucketOwner(opts.ExpectedBucketOwner))
	}
	// A separate slice, so concurrent Opens never append into a shared one.
	s.getOpts = append(slices.Clone(s.callOpts), quietMultipartChecksum)
	return s, nil
}

func (s *Store) owner() *string { return opt(s.opts.ExpectedBucketOwner) }

// List calls fn for each key under prefix after startAfter, in S3's UTF-8 byte order.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(exporter.ObjectInfo) error) error {
	in := &s3.ListObjectsV2Input{
		Bucket:              aws.String(s.opts.Bucket),
		ExpectedBucketOwner: s.owner(),
		Prefix:              opt(prefix),
		StartAfter:          opt(startAfter),
	}
	pages := s3.NewListObjectsV2Paginator(s.client, in)
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx, s.callOpts...)
		if err != nil {
			return s.fail("list", prefix, opErr("ListObjectsV2", err))
		}
		for _, obj := range page.Contents {
			n++
			if err := fn(exporter.ObjectInfo{Key: aws.ToString(obj.Key), Size: aws.ToInt64(obj.Size), ETag: aws.ToString(obj.ETag)}); err != nil {
				return err
			}
		}
	}
	s.log.DebugContext(ctx, "s3 list", "bucket", s.opts.Bucket, "prefix", prefix, "start_after", startAfter, "keys", n)
	return nil
}

// Open returns the object's body, to close; a missing key wraps exporter.ErrNotExist.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	return s.get(ctx, key, &s3.GetObjectInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		ExpectedBucketOwner: s.owner(),
		// The SDK verifies the body as it is read (single-part objects; S3 has no
		// whole-object checksum for composite multipart ones).
		ChecksumMode: types.ChecksumModeEnabled,
	})
}

func (s *Store) get(ctx context.Context, key string, in *s3.GetObjectInput) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, in, s.getOpts...)
	if err != nil {
		if isCode[*types.NoSuchKey](err, "NoSuchKey") {
			return nil, fmt.Errorf("s3: open %s: %w", key, exporter.ErrNotExist)
		}
		return nil, s.fail("open", key, opErr("GetObject", err))
	}
	return out.Body, nil
}

// OpenRange returns n bytes of key from off, one Range per GetObject
// (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html). With etag, If-Match
// makes S3 refuse (412) a replaced object, so a read never mixes versions. S3 has no
// checksum for part of an object.
func (s *Store) OpenRange(ctx context.Context, key, etag string, off, n int64) (io.ReadCloser, error) {
	if off < 0 || n <= 0 {
		return nil, fmt.Errorf("s3: open %s: range of %d bytes at %d", key, n, off)
	}
	return s.get(ctx, key, &s3.GetObjectInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		ExpectedBucketOwner: s.owner(),
		Range:               aws.String("bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10)),
		IfMatch:             opt(etag),
	})
}

// Delete removes key; S3 answers success for a missing key, as the interface requires.
func (s *Store) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		ExpectedBucketOwner: s.owner(),
	}, s.callOpts...)
	if err != nil {
		return s.fail("delete", key, opErr("DeleteObject", err))
	}
	s.log.DebugContext(ctx, "s3 delete", "bucket", s.opts.Bucket, "key", key)
	return nil
}

// Head returns the object's size, ETag and user metadata (keys in lower case, as S3 returns
// them); a missing key wraps exporter.ErrNotExist.
func (s *Store) Head(ctx context.Context, key string) (exporter.ObjectAttrs, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		ExpectedBucketOwner: s.owner(),
	}, s.callOpts...)
	if err != nil {
		// A HEAD response has no body to say NoSuchKey: the SDK calls the bare 404 NotFound.
		if isCode[*types.NotFound](err, "NotFound") || isCode[*types.NoSuchKey](err, "NoSuchKey") {
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

// quietMultipartChecksum silences the SDK's warning that it skipped a composite (multipart)
// checksum, which every big day file has.
func quietMultipartChecksum(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true }

// AbortStale aborts the unfinished multipart uploads under prefix initiated before olderThan
// whose key match accepts (this cluster's day files), logging each. A process killed
// mid-upload (kill -9, OOM, node loss) cannot abort its own, and else only a lifecycle rule
// would; the age limit spares a concurrent run's uploads.
func (s *Store) AbortStale(ctx context.Context, prefix string, olderThan time.Time, match func(string) bool) (int, error) {
	pages := s3.NewListMultipartUploadsPaginator(s.client, &s3.ListMultipartUploadsInput{
		Bucket:              aws.String(s.opts.Bucket),
		Prefix:              aws.String(prefix),
		ExpectedBucketOwner: s.owner(),
	})
	n := 0
	var errs []error
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx, s.callOpts...)
		if err != nil {
			return n, s.fail("list uploads", prefix, opErr("ListMultipartUploads", err))
		}
		for _, u := range page.Uploads {
			key, id := aws.ToString(u.Key), aws.ToString(u.UploadId)
			if !strings.HasPrefix(key, prefix) || !match(key) || u.Initiated == nil || !u.Initiated.Before(olderThan) {
				continue
			}
			if err := s.abortUpload(ctx, key, id); err != nil {
				errs = append(errs, s.fail("abort", key, opErr("AbortMultipartUpload", err)))
				continue
			}
			n++
			s.log.InfoContext(ctx, "aborted an unfinished upload left by an earlier run",
				"key", key, "initiated", u.Initiated.UTC().Format(time.RFC3339))
		}
	}
	return n, errors.Join(errs...)
}
