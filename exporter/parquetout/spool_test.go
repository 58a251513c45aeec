package parquetout

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// Columns write their pages interleaved into the one spool; each reads back
// exactly its own bytes, in order, and the file is emptied once every
// buffer is returned.
func TestSpoolInterleaved(t *testing.T) {
	p := &spoolPool{dir: t.TempDir(), pattern: "spool-*"}
	defer p.close()
	bufs := []io.ReadWriteSeeker{p.GetBuffer(), p.GetBuffer(), p.GetBuffer()}
	want := make([]bytes.Buffer, len(bufs))
	for round := range 50 {
		for i, b := range bufs {
			chunk := strings.Repeat(string(rune('a'+i)), 1+(round*7+i*13)%5000)
			if round%3 == 0 {
				chunk += "|header-and-body|" // two writes that merge into one segment
			}
			if _, err := io.WriteString(b, chunk); err != nil {
				t.Fatal(err)
			}
			want[i].WriteString(chunk)
		}
	}
	for i, b := range bufs {
		if off, err := b.Seek(0, io.SeekStart); err != nil || off != 0 {
			t.Fatalf("seek: %d %v", off, err)
		}
		got, err := io.ReadAll(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[i].Bytes()) {
			t.Fatalf("buffer %d: read %d bytes, want %d", i, len(got), want[i].Len())
		}
		if end, _ := b.Seek(0, io.SeekEnd); end != int64(want[i].Len()) {
			t.Fatalf("buffer %d: size %d, want %d", i, end, want[i].Len())
		}
	}
	p.PutBuffer(bufs[0])
	p.PutBuffer(bufs[1])
	if p.end == 0 {
		t.Fatal("spool emptied while a buffer still holds pages")
	}
	p.PutBuffer(bufs[2])
	p.PutBuffer(bufs[2]) // a second return is ignored
	if st, err := p.f.Stat(); err != nil || st.Size() != 0 || p.end != 0 || p.live != 0 {
		t.Fatalf("after every buffer came back: size %v err %v end %d live %d", st.Size(), err, p.end, p.live)
	}
	// The emptied spool is used again.
	b := p.GetBuffer()
	if _, err := io.WriteString(b, "again"); err != nil {
		t.Fatal(err)
	}
	b.Seek(0, io.SeekStart)
	if got, _ := io.ReadAll(b); string(got) != "again" {
		t.Fatalf("after reuse: %q", got)
	}
}

// A directory the spool cannot create its file in is an error on the
// first write, not a panic.
func TestSpoolUnwritableDir(t *testing.T) {
	p := &spoolPool{dir: "/nonexistent/dir", pattern: "spool-*"}
	b := p.GetBuffer()
	if _, err := b.Write([]byte("x")); err == nil || !strings.Contains(err.Error(), "page spool") {
		t.Fatalf("err = %v", err)
	}
}
