package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
)

// Opener is the read side of an ObjectStore that OpenAt needs.
type Opener interface {
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// ObjectAt is an object opened for random access, as Parquet readers need (footer, then chunks).
type ObjectAt struct {
	io.ReaderAt
	Size    int64
	Spooled int64 // bytes copied to a temp file: 0 when the store gave a file or reads ranges
	close   func()
}

// Close releases the object (and removes its temp file).
func (o *ObjectAt) Close() { o.close() }

// OpenAt opens key for random access (the report's and the bill's Parquet reads). A
// RangeOpener (S3) is read a block at a time as asked, a store handing out files (dirstore)
// is read in place, anything else is spooled to a temp file in tempDir ("" for the
// system's) named after pattern, so memory does not grow with the object.
func OpenAt(ctx context.Context, store Opener, key, tempDir, pattern string) (*ObjectAt, error) {
	if rs, ok := store.(RangeOpener); ok {
		return openRanged(ctx, rs, key)
	}
	rc, err := store.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	if f, ok := rc.(interface {
		io.ReadCloser
		io.ReaderAt
		Stat() (fs.FileInfo, error)
	}); ok {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		return &ObjectAt{ReaderAt: f, Size: st.Size(), close: func() { f.Close() }}, nil
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(tempDir, pattern)
	if err != nil {
		return nil, err
	}
	cleanup := func() { tmp.Close(); os.Remove(tmp.Name()) }
	n, err := io.Copy(tmp, rc)
	if err != nil {
		cleanup()
		return nil, err
	}
	return &ObjectAt{ReaderAt: tmp, Size: n, Spooled: n, close: cleanup}, nil
}

// RangeOpener is a store that reads part of an object: S3's GetObject with a Range header
// (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html, RFC 9110 section
// 14). OpenAt then fetches only what the Parquet reader reads (footer, kept column chunks).
type RangeOpener interface {
	Opener
	Head(ctx context.Context, key string) (ObjectAttrs, error)
	// OpenRange returns n bytes of key from off. A non-empty etag is the version to read: a
	// replaced object is an error, not a mix of two.
	OpenRange(ctx context.Context, key, etag string, off, n int64) (io.ReadCloser, error)
}

// rangeBlock is what one ranged GET fetches: Parquet readers read a column chunk in small
// sequential pieces, and at 256 KiB a week's report still fetches little beyond its row
// groups. rangeBlocks (16 MiB) are kept: a few per column decoded side by side.
const (
	rangeBlock  = 256 << 10
	rangeBlocks = 64
)

// rangeAt is an io.ReaderAt over ranged GETs, with a small LRU of blocks.
type rangeAt struct {
	ctx       context.Context
	store     RangeOpener
	key, etag string
	size      int64

	mu     sync.Mutex
	blocks []rangeBlockData // least recently used first
}

type rangeBlockData struct {
	idx  int64
	data []byte
}

// openRanged is OpenAt for a RangeOpener: a HEAD for size and version, then ranged reads.
func openRanged(ctx context.Context, store RangeOpener, key string) (*ObjectAt, error) {
	attrs, err := store.Head(ctx, key)
	if err != nil {
		return nil, err
	}
	r := &rangeAt{ctx: ctx, store: store, key: key, etag: attrs.ETag, size: attrs.Size}
	return &ObjectAt{ReaderAt: r, Size: attrs.Size, close: func() {
		r.mu.Lock()
		r.blocks = nil
		r.mu.Unlock()
	}}, nil
}

func (r *rangeAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s at %d: negative offset", r.key, off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := p[:min(int64(len(p)), r.size-off)]
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for n < len(want) {
		at := off + int64(n)
		b, err := r.block(at / rangeBlock)
		if err != nil {
			return n, err
		}
		n += copy(want[n:], b[at%rangeBlock:])
	}
	if len(want) < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// block returns block idx, fetching it when not kept.
func (r *rangeAt) block(idx int64) ([]byte, error) {
	for i, b := range r.blocks {
		if b.idx == idx {
			copy(r.blocks[i:], r.blocks[i+1:])
			r.blocks[len(r.blocks)-1] = b
			return b.data, nil
		}
	}
	off := idx * rangeBlock
	n := min(rangeBlock, r.size-off)
	var buf []byte
	if len(r.blocks) == rangeBlocks {
		buf = r.blocks[0].data
		r.blocks = append(r.blocks[:0], r.blocks[1:]...)
	}
	rc, err := r.store.OpenRange(r.ctx, r.key, r.etag, off, n)
	if err != nil {
		return nil, err
	}
	buf = slices.Grow(buf[:0], int(n))[:n]
	_, err = io.ReadFull(rc, buf)
	err = errors.Join(err, rc.Close())
	if err != nil {
		return nil, fmt.Errorf("read %s bytes %d-%d: %w", r.key, off, off+n-1, err)
	}
	r.blocks = append(r.blocks, rangeBlockData{idx, buf})
	return buf, nil
}
