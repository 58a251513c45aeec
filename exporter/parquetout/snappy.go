package parquetout

import (
	"encoding/binary"
	"slices"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go/format"
)

// snappyChunk is the largest input s2 encodes with its 64 KiB tables.
const snappyChunk = 64 << 10

// snappyCodec writes Parquet's SNAPPY (raw Snappy blocks) with s2's snappy-compatible
// "better" mode, as parquet-go's codec does, but hands s2 at most 64 KiB at a time, as the
// reference encoder (github.com/golang/snappy) does.
//
// Why: over 64 KiB s2 borrows a 576 KiB table from a sync.Pool shared with the 80 KiB tables
// of 4-16 KiB blocks (klauspost/compress v1.20.3, s2/encode_asm.go, encBetterPools[0]). A
// Parquet writer alternates exactly those sizes (data pages a little over 64 KiB, small
// dictionary-index pages), so nearly every large page allocated a table: about 60 MB of
// garbage per 120k-allocation day, more than the rest of the exporter, and frequent GCs.
//
// A Snappy block is a varint length then literal and copy elements that do not depend on
// where an encoder's blocks begin, so 64 KiB chunks encoded alone make one valid block.
// Copies cannot cross a chunk boundary: a fraction of a percent of size (docs/performance.md).
type snappyCodec struct{}

func (snappyCodec) String() string                            { return "SNAPPY" }
func (snappyCodec) CompressionCodec() format.CompressionCodec { return format.Snappy }

// Decode is s2's, which reads any Snappy block (into dst when large enough).
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
		// Drop the chunk's own varint length; keep its elements after dst's.
		enc := s2.EncodeSnappyBetter(free, chunk)
		_, hdr := binary.Uvarint(enc)
		dst = append(dst, enc[hdr:]...)
	}
	return dst, nil
}
