package exporter

import (
	"context"
	"io"
	"io/fs"
	"os"
)

// Opener is the read side of an ObjectStore that OpenAt needs.
type Opener interface {
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// ObjectAt is an object opened for random access, as Parquet readers need
// it (the footer first, then the column chunks they choose).
type ObjectAt struct {
	io.ReaderAt
	Size int64
	// Spooled is how many bytes were copied to a temp file: 0 when the
	// store handed out a file or reads ranges.
	Spooled int64
	// Fetched counts the ranged reads of a RangeOpener's object (nil
	// otherwise).
	Fetched *RangeStats
	close   func()
}

// Close releases the object (and removes its temp file).
func (o *ObjectAt) Close() { o.close() }

// OpenAt opens key for random access. A store that reads ranges (S3,
// rangeat.go) is read a block at a time as the reader asks; a store that
// hands out files (the directory store) is read in place; anything else
// is spooled to a temp file in tempDir ("" for the system's) named after
// pattern, so memory does not grow with the object. The report and the
// bill's reader both open Parquet objects this way.
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
