package parquetout

import (
	"encoding/binary"
	"slices"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go/format"
)

// snappyChunk is the largest input s2 encodes with its 64 KiB tables.
const snappyChunk = 64 << 10

// snappyCodec writes Parquet's SNAPPY (the raw Snappy block format) with
// s2's snappy-compatible "better" mode, as parquet-go's own codec does, but
// hands s2 at most 64 KiB at a time, as the reference Snappy encoder
// (github.com/golang/snappy) also does.
//
// Why: for a block over 64 KiB s2 borrows a 576 KiB table from a
// sync.Pool that it shares with the 80 KiB tables of 4 to 16 KiB blocks
// (klauspost/compress v1.20.3, s2/encode_asm.go, encBetterPools[0]). A
// Parquet writer alternates between exactly those sizes (64 KiB data pages
// that end a little over their target, small dictionary-index pages), so
// nearly every large page found the wrong table in the pool and allocated
// a new one: about 60 MB of garbage per 120k-allocation day, more than
// the rest of the exporter together, and a GC cycle every few pages.
//
// A Snappy block is a varint length and then a sequence of literal and
// copy elements; elements never depend on where an encoder's internal
// blocks begin, so the elements of consecutive 64 KiB chunks, each
// encoded alone, make one valid block of the whole input. Copies cannot
// reach back across a chunk boundary, which costs a fraction of a percent
// of file size on pages just over 64 KiB (docs/performance.md).
type snappyCodec struct{}

func (snappyCodec) String() string                            { return "SNAPPY" }
func (snappyCodec) CompressionCodec() format.CompressionCodec { return format.Snappy }

// Decode is s2's, which reads any Snappy block into dst when it is large
// enough.
func (snappyCodec) Decode(dst, src []byte) ([]byte, error) { return s2.Decode(dst, src) }

// Encode writes the Snappy block of src into dst (grown when too small).
func (snappyCodec) Encode(dst, src []byte) ([]byte, error) {
	if len(src) <= snappyChunk {
		return s2.EncodeSnappyBetter(dst[:0], src), nil
	}
	dst = binary.AppendUvarint(dst[:0], uint64(len(src)))
	for len(src) > 0 {
		chunk := src[:min(len(src), snappyChunk)]
		src = src[len(chunk):]
		dst = slices.Grow(dst, s2.MaxEncodedLen(len(chunk)))
		free := dst[len(dst):cap(dst)]
		// s2 writes the chunk's own varint length first; drop it, and
		// keep the elements right after what dst already holds.
		enc := s2.EncodeSnappyBetter(free, chunk)
		_, hdr := binary.Uvarint(enc)
		dst = append(dst, enc[hdr:]...)
	}
	return dst, nil
}
