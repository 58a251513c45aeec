package kubecost

import (
	"io"
	"sync"
)

// readAhead reads the body on its own goroutine, a few buffers ahead of the scanner: copying
// the body out of the kernel is about a sixth of the decoder's CPU, and the decoder's goroutine
// is the exporter's slowest stage, so the second core reads while the first parses
// (docs/performance.md, "One pass").
//
// The goroutine hands over whole buffers: the body arrives in pieces of a few KiB, and a
// handoff per piece would wake a thread thousands of times a day. But a decoder with nothing
// left takes at once what the buffer being filled holds: otherwise a body that stalls (or that
// the server stops sending after a syntax error) would hold back bytes already received, and
// the error they show.
//
// Its buffers are reused across responses. stop returns only once the goroutine is done with
// the source, so the caller may reuse or close it; a caller whose source can block must first
// make its pending Read return (decoder.abort).
type readAhead struct {
	bufs [aheadBufs][]byte
	full chan aheadChunk
	free chan int // indexes into bufs
	quit chan struct{}
	done chan struct{}
	kick chan struct{} // the goroutine read something while the decoder waits

	cur []byte // unread part of the chunk being consumed
	idx int    // its buffer, -1 when none is held
	err error  // the source's error, after its last chunk

	// The buffer being filled, under mu: the goroutine writes bufs[fill][n:], the decoder may take
	// bufs[fill][taken:n].
	mu      sync.Mutex
	fill    int // -1 when none
	n       int
	taken   int
	waiting bool // the decoder waits for bytes
	busy    bool // a goroutine is running
}

const (
	aheadBufs = 8
	aheadSize = 256 << 10
)

// aheadChunk hands buffer idx to the decoder: bytes [from, n) are new (the decoder took
// [0, from) while it was filled), err follows.
type aheadChunk struct {
	idx, from, n int
	err          error
}

func newReadAhead() *readAhead {
	return &readAhead{
		full: make(chan aheadChunk, aheadBufs),
		free: make(chan int, aheadBufs),
		quit: make(chan struct{}, 1),
		done: make(chan struct{}, 1),
		kick: make(chan struct{}, 1),
		fill: -1,
	}
}

func (a *readAhead) start(src io.Reader) {
	a.cur, a.idx, a.err, a.busy = nil, -1, nil, true
	a.fill, a.n, a.taken, a.waiting = -1, 0, 0, false
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
		a.mu.Lock()
		a.fill, a.n, a.taken = i, 0, 0
		a.mu.Unlock()
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
			a.mu.Lock()
			a.n = n
			wake := a.waiting && m > 0
			a.mu.Unlock()
			if wake {
				select {
				case a.kick <- struct{}{}:
				default:
				}
			}
		}
		a.mu.Lock()
		from := a.taken
		a.fill = -1
		a.mu.Unlock()
		a.full <- aheadChunk{idx: i, from: from, n: n, err: err} // never blocks: one slot per buffer
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
		// A buffer handed over comes first, checked under mu: the goroutine hands it over before
		// filling the next one, whose bytes must not be taken before the rest of this one.
		a.mu.Lock()
		select {
		case c := <-a.full:
			a.mu.Unlock()
			a.cur, a.idx, a.err = a.bufs[c.idx][c.from:c.n], c.idx, c.err
			continue
		default:
		}
		// Nothing handed over: take what the buffer being filled holds, or wait for more.
		if a.fill >= 0 && a.n > a.taken {
			a.cur = a.bufs[a.fill][a.taken:a.n]
			a.taken = a.n
			a.mu.Unlock()
			continue
		}
		a.waiting = true
		a.mu.Unlock()
		select {
		case c := <-a.full:
			a.cur, a.idx, a.err = a.bufs[c.idx][c.from:c.n], c.idx, c.err
		case <-a.kick:
		}
		a.mu.Lock()
		a.waiting = false
		a.mu.Unlock()
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// stop ends the reading goroutine, waits for it, and takes back every buffer.
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
		case <-a.kick:
		case <-a.quit: // the goroutine ended on its own, at the body's end
		default:
			return
		}
	}
}
