package parquetout

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// spoolPool keeps the row group's compressed pages in one temp file for all columns, each
// column's pages a list of segments. parquet-go's file pool makes a temp file per column per
// row group: a hundred files and twice the system calls every 64k rows, a measurable share
// of CPU on an overlay file system. The file is unlinked at once, so a killed process
// leaves nothing, and emptied when no column holds pages (after every row group).
type spoolPool struct {
	dir     string
	pattern string

	mu   sync.Mutex
	f    *os.File // nil until the first page
	end  int64    // bytes written to f since it was last emptied
	live int      // buffers handed out and not yet returned
	err  error    // sticky: the file could not be created or emptied
}

// GetBuffer returns an empty page buffer.
func (p *spoolPool) GetBuffer() io.ReadWriteSeeker {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live++
	return &spoolBuf{pool: p}
}

// PutBuffer takes back a buffer parquet-go is done with.
func (p *spoolPool) PutBuffer(b io.ReadWriteSeeker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if sb, ok := b.(*spoolBuf); ok && sb.pool == p && !sb.done {
		sb.done, sb.segs = true, nil
		p.live--
	}
	if p.live == 0 && p.f != nil && p.end > 0 && p.err == nil {
		if err := p.f.Truncate(0); err != nil {
			p.err = fmt.Errorf("parquet: empty page spool: %w", err)
		}
		p.end = 0
	}
}

// close releases the file.
func (p *spoolPool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f == nil {
		return nil
	}
	err := p.f.Close()
	p.f = nil
	return err
}

// append writes b at the end of the file and returns its offset.
func (p *spoolPool) append(b []byte) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return 0, p.err
	}
	if p.f == nil {
		f, err := os.CreateTemp(p.dir, p.pattern)
		if err == nil {
			// Open files outlive their name on Linux and macOS.
			if err = os.Remove(f.Name()); err != nil {
				_ = f.Close()
			}
		}
		if err != nil {
			p.err = fmt.Errorf("parquet: page spool: %w", err)
			return 0, p.err
		}
		p.f = f
	}
	off := p.end
	if _, err := p.f.WriteAt(b, off); err != nil {
		return 0, fmt.Errorf("parquet: page spool: %w", err)
	}
	p.end += int64(len(b))
	return off, nil
}

func (p *spoolPool) readAt(b []byte, off int64) (int, error) {
	p.mu.Lock()
	f := p.f
	p.mu.Unlock()
	if f == nil {
		return 0, errors.New("parquet: page spool: read before write")
	}
	return f.ReadAt(b, off)
}

// spoolBuf is one column's pages: segments of the pool's file, in order.
type spoolBuf struct {
	pool *spoolPool
	segs []spoolSeg
	size int64 // total bytes
	pos  int64 // read/write position; parquet-go only writes at the end
	done bool
}

type spoolSeg struct{ off, n int64 }

func (b *spoolBuf) Write(p []byte) (int, error) {
	if b.pos != b.size {
		return 0, errors.New("parquet: page spool: write not at the end")
	}
	off, err := b.pool.append(p)
	if err != nil {
		return 0, err
	}
	n := int64(len(p))
	if k := len(b.segs) - 1; k >= 0 && b.segs[k].off+b.segs[k].n == off {
		b.segs[k].n += n // a page's header and body, say
	} else {
		b.segs = append(b.segs, spoolSeg{off, n})
	}
	b.size += n
	b.pos = b.size
	return len(p), nil
}

func (b *spoolBuf) Read(p []byte) (int, error) {
	if b.pos >= b.size {
		return 0, io.EOF
	}
	// Few segments per column: walk to the one holding pos.
	start := int64(0)
	for _, s := range b.segs {
		if b.pos < start+s.n {
			k := b.pos - start
			m := min(int64(len(p)), s.n-k)
			n, err := b.pool.readAt(p[:m], s.off+k)
			b.pos += int64(n)
			if err == io.EOF && int64(n) == m {
				err = nil
			}
			return n, err
		}
		start += s.n
	}
	return 0, io.EOF
}

func (b *spoolBuf) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += b.pos
	case io.SeekEnd:
		offset += b.size
	default:
		return 0, errors.New("parquet: page spool: bad whence")
	}
	if offset < 0 || offset > b.size {
		return 0, errors.New("parquet: page spool: seek out of range")
	}
	b.pos = offset
	return offset, nil
}
