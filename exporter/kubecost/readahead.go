package kubecost

import (
	"io"
	"sync/atomic"
)

// readAhead reads the body on its own goroutine, a few buffers ahead of
// the scanner. Copying the body out of the kernel is about a sixth of the
// decoder's CPU time, and the decoder's goroutine is the exporter's
// slowest stage; with the reads elsewhere, the second core does them
// while the first parses (docs/performance.md, "One pass").
//
// Everything it holds is reused from one response to the next. stop
// returns only once the goroutine is done with the source, so the caller
// may reuse or close it.
type readAhead struct {
	bufs [aheadBufs][]byte
	full chan aheadChunk
	free chan int // indexes into bufs
	quit chan struct{}
	done chan struct{}

	cur  []byte // unread part of the chunk being consumed
	idx  int    // its buffer, -1 when none is held
	err  error  // the source's error, after its last chunk
	busy bool   // a goroutine is running

	starving atomic.Bool // the decoder waits for a buffer
}

const (
	aheadBufs = 8
	aheadSize = 256 << 10
)

type aheadChunk struct {
	idx int
	n   int
	err error
}

func newReadAhead() *readAhead {
	return &readAhead{
		full: make(chan aheadChunk, aheadBufs),
		free: make(chan int, aheadBufs),
		quit: make(chan struct{}, 1),
		done: make(chan struct{}, 1),
	}
}

// start begins reading src.
func (a *readAhead) start(src io.Reader) {
	a.cur, a.idx, a.err, a.busy = nil, -1, nil, true
	for i := range a.bufs {
		a.free <- i
	}
	go a.run(src)
}

func (a *readAhead) run(src io.Reader) {
	defer func() { a.done <- struct{}{} }()
	for {
		var i int
		select {
		case i = <-a.free:
		case <-a.quit:
			return
		}
		if a.bufs[i] == nil {
			a.bufs[i] = make([]byte, aheadSize)
		}
		// Fill the buffer: the body arrives in pieces of a few KiB, and a
		// handoff per piece would wake one goroutine's thread or the
		// other's thousands of times a day. But a decoder with nothing to
		// do gets what there is: a slow body is parsed as it comes.
		n, err := 0, error(nil)
		for n < len(a.bufs[i]) && err == nil {
			var m int
			m, err = src.Read(a.bufs[i][n:])
			n += m
			select {
			case <-a.quit: // the decoder stopped early: read no further
				return
			default:
			}
			if n > 0 && a.starving.Load() {
				break
			}
		}
		a.full <- aheadChunk{idx: i, n: n, err: err} // never blocks: one slot per buffer
		if err != nil {
			return
		}
	}
}

// Read returns the next bytes of the body.
func (a *readAhead) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		if a.idx >= 0 {
			a.free <- a.idx
			a.idx = -1
		}
		var c aheadChunk
		select {
		case c = <-a.full:
		default:
			a.starving.Store(true)
			c = <-a.full
			a.starving.Store(false)
		}
		a.cur, a.idx, a.err = a.bufs[c.idx][:c.n], c.idx, c.err
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// stop ends the reading goroutine and waits for it, then takes back every
// buffer for the next response.
func (a *readAhead) stop() {
	if !a.busy {
		return
	}
	a.quit <- struct{}{}
	<-a.done
	a.busy = false
	for {
		select {
		case <-a.full:
		case <-a.free:
		case <-a.quit: // the goroutine ended on its own, at the body's end
		default:
			return
		}
	}
}
