// Package s3store is the exporter's ObjectStore on Amazon S3 (and
// S3-compatible servers such as MinIO).
//
// Put accepts any io.Reader: the exporter hands it the day's finished spool
// file (seekable), while other callers may stream a body of unknown length.
// Uploads are plain PutObject or multipart calls of our own (upload.go)
// rather than the SDK's upload manager, which is deprecated and cannot carry
// the conditional-write headers on CompleteMultipartUpload. A spooled day
// file is uploaded in place, part by part, and a failed multipart upload is
// aborted, so an object appears whole or not at all (CONTRACT §3). Uploads
// that a killed process left behind are aborted by the next run
// (AbortStale).
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

// abortTimeout bounds the clean-up of a failed multipart upload. It runs on
// a context detached from the caller's, because the usual reason for the
// failure is that the caller's context was cancelled.
const abortTimeout = 30 * time.Second

// Store is an exporter.ObjectStore on one S3 bucket. It is safe for
// concurrent use.
type Store struct {
	client *s3.Client
	opts   Options
	log    *slog.Logger
	// callOpts go on every request; getOpts are callOpts for GetObject.
	callOpts, getOpts []func(*s3.Options)
}

// New returns a Store writing to opts.Bucket through client. Build client
// with ClientConfig.New so that custom endpoints get path-style addressing.
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

// owner returns the ExpectedBucketOwner request field, nil when disabled.
func (s *Store) owner() *string { return opt(s.opts.ExpectedBucketOwner) }

// List calls fn for each key under prefix that sorts after startAfter, in
// S3's lexical (UTF-8 byte) order, one ListObjectsV2 page at a time.
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

// Open returns the object's body. The caller must close it. A missing key
// gives an error wrapping exporter.ErrNotExist.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	return s.get(ctx, key, &s3.GetObjectInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		ExpectedBucketOwner: s.owner(),
		// Ask for the stored checksum so the SDK verifies the body as it is
		// read (for single-part objects; S3 cannot give a whole-object
		// checksum for composite multipart ones).
		ChecksumMode: types.ChecksumModeEnabled,
	})
}

// get is GetObject for Open and OpenRange: the body, or a missing key as
// exporter.ErrNotExist.
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

// OpenRange returns n bytes of key from off: GetObject with
// Range: bytes=off-(off+n-1) (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html;
// S3 serves one range per request). With etag, If-Match makes S3 refuse
// (412) a replaced object, so one read never mixes two versions. No
// checksum is asked for: S3 has none for part of an object.
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

// Delete removes key. S3 answers success for a missing key, as the
// interface requires.
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

// quietMultipartChecksum silences the SDK's warning that it skipped
// validating a composite (multipart) checksum: every big day file has one,
// so the warning would fire on every read and mean nothing.
func quietMultipartChecksum(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true }

// AbortStale aborts the unfinished multipart uploads under prefix that were
// initiated before olderThan and whose key match accepts, logging each. A
// process killed mid-upload (kill -9, OOM, node loss) cannot abort its
// own; without this, only a bucket lifecycle rule would remove the parts.
// The age limit keeps it away from uploads a concurrent run is still
// sending; match keeps it to this cluster's own day files.
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
