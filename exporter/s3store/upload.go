package s3store

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// maxParts is S3's limit on the parts of one multipart upload.
const maxParts = 10000

// Put streams r to key when cond holds: up to PartSize in one PutObject, else multipart,
// Concurrency parts at a time. The precondition rides on PutObject or
// CompleteMultipartUpload, so it holds when the object is committed. When r, ctx or the
// precondition fails, the upload is aborted: no object appears, an existing one is kept.
//
// A spooled day file (io.ReaderAt with Seek) is read in place, a file section per part, so
// memory does not grow with the day and a retry re-reads from disk. Any other reader is cut
// into PartSize buffers, Concurrency+1 at most.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, meta map[string]string, cond exporter.Precondition) error {
	start := time.Now()
	if s.opts.PartSize == 0 { // a store opened to read (Options.PartSize)
		return s.fail("put", key, errors.New("no part size: the store was opened without Options.PartSize"))
	}
	src, err := newPartSource(ctx, r, s.opts.PartSize, s.opts.Concurrency+1)
	if err != nil {
		return s.fail("put", key, err)
	}
	first, err := src.next()
	if err != nil && !errors.Is(err, io.EOF) {
		return s.fail("put", key, err)
	}
	var parts int
	if src.single(first) {
		parts = 1
		err = s.putSingle(ctx, key, first, meta, cond)
	} else {
		parts, err = s.putMultipart(ctx, key, src, first, meta, cond)
	}
	if err != nil {
		s.log.DebugContext(ctx, "s3 put failed", "bucket", s.opts.Bucket, "key", key, "error", err)
		if cond.IfMatch != "" && apiCode(err) == "NoSuchKey" {
			// If-Match on a key gone: S3 and MinIO answer 404, not 412; the same lost race.
			return fmt.Errorf("%w (%w)", &Error{Op: "put", Key: key, Msg: "the object to replace is gone", Err: err}, exporter.ErrPreconditionFailed)
		}
		return s.fail("put", key, err)
	}
	s.log.DebugContext(ctx, "s3 put", "bucket", s.opts.Bucket, "key", key, "bytes", src.total,
		"parts", parts, "duration", time.Since(start))
	return nil
}

func (s *Store) putSingle(ctx context.Context, key string, p part, meta map[string]string, cond exporter.Precondition) error {
	defer p.release()
	in := s.objectInput(key, meta)
	in.Body, in.ContentLength = p.body, aws.Int64(p.size)
	in.IfMatch, in.IfNoneMatch = opt(cond.IfMatch), ifNoneMatch(cond)
	_, err := s.client.PutObject(ctx, in, s.callOpts...)
	return opErr("PutObject", err)
}

// objectInput is what every write of key says about the object, whole or in parts.
func (s *Store) objectInput(key string, meta map[string]string) *s3.PutObjectInput {
	h := s.opts.Headers
	return &s3.PutObjectInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		ContentType:         aws.String(s.opts.ContentType),
		Metadata:            h.merged(meta),
		ExpectedBucketOwner: s.owner(),
		ChecksumAlgorithm:   s.opts.Checksum,

		ServerSideEncryption:    types.ServerSideEncryption(s.opts.SSE),
		SSEKMSKeyId:             opt(s.opts.SSEKMSKeyID),
		SSEKMSEncryptionContext: opt(h.SSEKMSEncryptionContext),

		ACL: types.ObjectCannedACL(h.ACL), StorageClass: types.StorageClass(h.StorageClass),
		GrantRead: opt(h.GrantRead), GrantReadACP: opt(h.GrantReadACP), GrantWriteACP: opt(h.GrantWriteACP), GrantFullControl: opt(h.GrantFullControl),
		CacheControl: opt(h.CacheControl), ContentDisposition: opt(h.ContentDisposition), ContentLanguage: opt(h.ContentLanguage),
		WebsiteRedirectLocation: opt(h.WebsiteRedirectLocation),
	}
}

// createInput copies every field the two requests share by name, so a header objectInput
// sets (or an SDK release adds) reaches both without a second list; once per object, the
// reflection costs nothing next to the upload.
func createInput(p *s3.PutObjectInput) *s3.CreateMultipartUploadInput {
	c := &s3.CreateMultipartUploadInput{}
	pv, cv := reflect.ValueOf(p).Elem(), reflect.ValueOf(c).Elem()
	for i := range cv.NumField() {
		f := cv.Type().Field(i)
		if pf := pv.FieldByName(f.Name); f.IsExported() && pf.IsValid() && pf.Type() == f.Type {
			cv.Field(i).Set(pf)
		}
	}
	return c
}

func (s *Store) putMultipart(ctx context.Context, key string, src *partSource, first part, meta map[string]string, cond exporter.Precondition) (int, error) {
	in := createInput(s.objectInput(key, meta))
	out, err := s.client.CreateMultipartUpload(ctx, in, s.callOpts...)
	if err != nil {
		first.release()
		// A lost reply leaves an upload we cannot name; the next run's AbortStale removes it.
		return 0, opErr("CreateMultipartUpload", err)
	}
	id := aws.ToString(out.UploadId)
	completed, err := s.uploadParts(ctx, key, id, src, first)
	if err == nil {
		_, err = s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
			Bucket:              aws.String(s.opts.Bucket),
			Key:                 aws.String(key),
			UploadId:            aws.String(id),
			MultipartUpload:     &types.CompletedMultipartUpload{Parts: completed},
			ExpectedBucketOwner: s.owner(),
			IfMatch:             opt(cond.IfMatch),
			IfNoneMatch:         ifNoneMatch(cond),
		}, s.callOpts...)
		err = opErr("CompleteMultipartUpload", err)
	}
	if err != nil {
		return len(completed), s.abort(ctx, key, id, err)
	}
	return len(completed), nil
}

// uploadParts sends first and the rest of src, Concurrency at a time, and returns them in
// part order; the first failure stops the rest.
func (s *Store) uploadParts(ctx context.Context, key, id string, src *partSource, first part) ([]types.CompletedPart, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu        sync.Mutex
		completed []types.CompletedPart
		wg        sync.WaitGroup
		sem       = make(chan struct{}, s.opts.Concurrency)
	)
	send := func(p part) {
		defer wg.Done()
		defer func() { <-sem }()
		defer p.release()
		out, err := s.client.UploadPart(ctx, &s3.UploadPartInput{
			Bucket:              aws.String(s.opts.Bucket),
			Key:                 aws.String(key),
			UploadId:            aws.String(id),
			PartNumber:          aws.Int32(p.num),
			Body:                p.body,
			ContentLength:       aws.Int64(p.size),
			ChecksumAlgorithm:   s.opts.Checksum,
			ExpectedBucketOwner: s.owner(),
		}, s.callOpts...)
		if err != nil {
			cancel(opErr(fmt.Sprintf("UploadPart %d", p.num), err))
			return
		}
		mu.Lock()
		completed = append(completed, types.CompletedPart{
			PartNumber: aws.Int32(p.num), ETag: out.ETag,
			ChecksumCRC32: out.ChecksumCRC32, ChecksumCRC32C: out.ChecksumCRC32C,
			ChecksumCRC64NVME: out.ChecksumCRC64NVME, ChecksumSHA1: out.ChecksumSHA1, ChecksumSHA256: out.ChecksumSHA256,
		})
		mu.Unlock()
	}
	p, err := first, error(nil)
	for {
		sem <- struct{}{}
		if ctx.Err() != nil {
			<-sem
			p.release()
			break
		}
		wg.Add(1)
		go send(p)
		if p, err = src.next(); err != nil {
			if !errors.Is(err, io.EOF) {
				cancel(err)
			}
			break
		}
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return completed, err
	}
	if len(completed) > maxParts {
		return completed, fmt.Errorf("%d parts, S3 allows %d: raise the part size", len(completed), maxParts)
	}
	slices.SortFunc(completed, func(a, b types.CompletedPart) int {
		return cmp.Compare(aws.ToInt32(a.PartNumber), aws.ToInt32(b.PartNumber))
	})
	return completed, nil
}

// abort removes a failed multipart upload: no parts left behind (CONTRACT §3) or billed.
func (s *Store) abort(ctx context.Context, key, id string, cause error) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	err := s.abortUpload(actx, key, id)
	if err == nil {
		return cause
	}
	s.log.WarnContext(ctx, "s3: could not abort a multipart upload; the next run removes it",
		"bucket", s.opts.Bucket, "key", key, "upload_id", id, "error", s.brief(err))
	return errors.Join(cause, fmt.Errorf("abort: %w", opErr("AbortMultipartUpload", err)))
}

// abortUpload treats an upload already gone as done.
func (s *Store) abortUpload(ctx context.Context, key, id string) error {
	_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket:              aws.String(s.opts.Bucket),
		Key:                 aws.String(key),
		UploadId:            aws.String(id),
		ExpectedBucketOwner: s.owner(),
	}, s.callOpts...)
	if isCode[*types.NoSuchUpload](err, "NoSuchUpload") {
		return nil
	}
	return err
}

func ifNoneMatch(c exporter.Precondition) *string {
	if !c.IfNoneMatch {
		return nil
	}
	return aws.String("*")
}

// part is one part's body, seekable so the SDK can checksum and rewind it.
type part struct {
	num     int32
	body    io.ReadSeeker
	size    int64
	release func()
}

// partSource cuts a Put's body into sections of a seekable file, or pooled stream buffers.
type partSource struct {
	ctx      context.Context
	file     readerAtSeeker // nil for a stream
	size     int64          // file size
	stream   io.Reader
	partSize int64
	// free recycles buffers; a sync.Pool may drop them (it does under the race detector),
	// and memory would grow with the object.
	free  chan *[]byte
	num   int32
	off   int64
	total int64
	eof   bool
}

type readerAtSeeker interface {
	io.ReaderAt
	io.ReadSeeker
}

func newPartSource(ctx context.Context, r io.Reader, partSize int64, buffers int) (*partSource, error) {
	src := &partSource{ctx: ctx, stream: r, partSize: partSize, free: make(chan *[]byte, buffers)}
	if f, ok := r.(readerAtSeeker); ok {
		size, err := f.Seek(0, io.SeekEnd)
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			return nil, err
		}
		src.file, src.size = f, size
		// A known size can stay within S3's part limit.
		for src.size/src.partSize >= maxParts {
			src.partSize *= 2
		}
	}
	return src, nil
}

func (src *partSource) buffer() *[]byte {
	select {
	case b := <-src.free:
		return b
	default:
		b := make([]byte, src.partSize)
		return &b
	}
}

func (src *partSource) recycle(b *[]byte) {
	select {
	case src.free <- b:
	default:
	}
}

// single reports whether first is the whole body.
func (src *partSource) single(first part) bool {
	if src.file != nil {
		return src.size <= src.partSize
	}
	return src.eof
}

// next returns the next part, or io.EOF; the first is always a part (empty for no body).
func (src *partSource) next() (part, error) {
	if err := src.ctx.Err(); err != nil {
		return part{}, err
	}
	if src.file != nil {
		if src.num > 0 && src.off >= src.size {
			return part{}, io.EOF
		}
		n := min(src.partSize, src.size-src.off)
		src.num++
		p := part{num: src.num, body: io.NewSectionReader(src.file, src.off, n), size: n, release: func() {}}
		src.off += n
		src.total += n
		return p, nil
	}
	if src.eof {
		return part{}, io.EOF
	}
	bp := src.buffer()
	n, err := io.ReadFull(exporter.ContextReader(src.ctx, src.stream), *bp)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		src.eof = true
		if n == 0 && src.num > 0 {
			src.recycle(bp)
			return part{}, io.EOF
		}
	case err != nil:
		src.recycle(bp)
		return part{}, err
	}
	src.num++
	src.total += int64(n)
	return part{num: src.num, body: bytes.NewReader((*bp)[:n]), size: int64(n), release: func() { src.recycle(bp) }}, nil
}
