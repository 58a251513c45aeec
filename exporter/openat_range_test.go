package exporter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
)

// memRange is a RangeOpener over one object in memory that records the
// ranges asked for.
type memRange struct {
	data   []byte
	etag   string
	ranges [][2]int64
}

func (m *memRange) Open(context.Context, string) (io.ReadCloser, error) {
	return nil, errors.New("whole-object GET")
}

func (m *memRange) Head(context.Context, string) (ObjectAttrs, error) {
	return ObjectAttrs{Size: int64(len(m.data)), ETag: m.etag}, nil
}

func (m *memRange) OpenRange(_ context.Context, _, etag string, off, n int64) (io.ReadCloser, error) {
	if etag != m.etag {
		return nil, errors.New("412 precondition failed")
	}
	if off < 0 || n <= 0 || off+n > int64(len(m.data)) {
		return nil, errors.New("416 range not satisfiable")
	}
	m.ranges = append(m.ranges, [2]int64{off, n})
	return io.NopCloser(bytes.NewReader(m.data[off : off+n])), nil
}

// TestOpenAtRanges: a RangeOpener's object is read by block-aligned
// ranges of the version HEAD saw, never whole; reads across blocks and
// past the end behave as io.ReaderAt says; a block read again is not
// fetched again; the counts are what was fetched.
func TestOpenAtRanges(t *testing.T) {
	data := make([]byte, 3*rangeBlock+100)
	for i := range data {
		data[i] = byte(i * 7)
	}
	store := &memRange{data: data, etag: `"v1"`}
	obj, err := OpenAt(context.Background(), store, "k", "", "x-*")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if obj.Size != int64(len(data)) || obj.Spooled != 0 {
		t.Fatalf("object %+v", obj)
	}
	p := make([]byte, 300)
	off := int64(rangeBlock - 100) // across blocks 0 and 1
	if n, err := obj.ReadAt(p, off); n != len(p) || err != nil || !bytes.Equal(p, data[off:off+300]) {
		t.Fatalf("ReadAt across blocks: %d, %v", n, err)
	}
	if n, err := obj.ReadAt(p[:50], off+10); n != 50 || err != nil || !bytes.Equal(p[:50], data[off+10:off+60]) {
		t.Fatalf("ReadAt again: %d, %v", n, err)
	}
	end := int64(len(data) - 40) // the last, short block
	if n, err := obj.ReadAt(p, end); n != 40 || err != io.EOF || !bytes.Equal(p[:40], data[end:]) {
		t.Fatalf("ReadAt at the end: %d, %v", n, err)
	}
	if n, err := obj.ReadAt(p, int64(len(data))); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt past the end: %d, %v", n, err)
	}
	want := [][2]int64{{0, rangeBlock}, {rangeBlock, rangeBlock}, {3 * rangeBlock, 100}}
	if len(store.ranges) != len(want) {
		t.Fatalf("ranges %v, want %v", store.ranges, want)
	}
	for i := range want {
		if store.ranges[i] != want[i] {
			t.Errorf("ranges %v, want %v", store.ranges, want)
		}
	}
	fetched := int64(0)
	for _, r := range store.ranges {
		fetched += r[1]
	}
	if g := len(store.ranges); g != 3 || fetched != 2*rangeBlock+100 {
		t.Errorf("fetched %d GETs, %d bytes", g, fetched)
	}
	store.etag = `"v2"` // replaced while read: an error, not the new bytes
	if _, err := obj.ReadAt(p, 2*rangeBlock); err == nil {
		t.Error("read a replaced object without an error")
	}
}

// TestOpenAtRangesEvicts: past rangeBlocks blocks the least recently used
// one goes, so memory stays bounded and a block read after its eviction
// is fetched again.
func TestOpenAtRangesEvicts(t *testing.T) {
	store := &memRange{data: make([]byte, (rangeBlocks+2)*rangeBlock)}
	obj, err := OpenAt(context.Background(), store, "k", "", "x-*")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	p := make([]byte, 1)
	for b := range int64(rangeBlocks + 1) {
		if _, err := obj.ReadAt(p, b*rangeBlock); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := obj.ReadAt(p, rangeBlock); err != nil { // still kept
		t.Fatal(err)
	}
	if _, err := obj.ReadAt(p, 0); err != nil { // evicted
		t.Fatal(err)
	}
	if g := len(store.ranges); g != rangeBlocks+2 {
		t.Errorf("%d GETs, want %d", g, rangeBlocks+2)
	}
	if n := len(obj.ReaderAt.(*rangeAt).blocks); n != rangeBlocks {
		t.Errorf("%d blocks kept, want %d", n, rangeBlocks)
	}
}
