package kubecost

import (
	"errors"
	"sync/atomic"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// The reading stage hands allocations to the parsing stage in batches of
// raw bytes. pipeBatches batches of about batchBytes each are all that is
// ever buffered (about 1 MiB per decoder): one being filled, the others
// queued or being parsed. Batches rather than single allocations keep the
// channel handoffs (and the goroutine wake-ups behind them) to about one
// per hundred allocations.
const (
	batchBytes  = 256 << 10
	pipeBatches = 4
)

// errSinkFailed stops the reading stage once the parsing stage saw a sink
// error; decode reports the sink's own error instead.
var errSinkFailed = errors.New("sink failed")

// rawBatch holds allocations back to back in buf: entry e's raw key in its
// set is buf[e.key:e.val] and its raw object buf[e.val:e.end].
type rawBatch struct {
	buf  []byte
	ents []rawEntry
}

type rawEntry struct {
	set           int64
	key, val, end int
}

// pipeline joins the two stages of one decoder. The batches are reused
// from one response to the next; the parsing goroutine lives for one
// response, so a pooled decoder that is dropped leaves nothing running.
type pipeline struct {
	free   chan *rawBatch
	work   chan *rawBatch // a nil batch ends the response
	done   chan pipeResult
	failed atomic.Bool // set by the parsing stage on a sink error

	cur    *rawBatch // being filled by the reading stage; nil until needed
	keyOff int       // start in cur.buf of the key passed to key

	// serial parses each full batch on the reading goroutine instead: the
	// same two passes on one core, which the benchmarks compare against.
	serial bool
	ps     *parser
	sink   exporter.RecordSink
	res    pipeResult
}

type pipeResult struct {
	n   int
	err error
}

func newPipeline() *pipeline {
	p := &pipeline{
		free: make(chan *rawBatch, pipeBatches),
		work: make(chan *rawBatch, pipeBatches),
		done: make(chan pipeResult, 1),
	}
	for range pipeBatches {
		p.free <- &rawBatch{}
	}
	return p
}

// begin starts the parsing stage of one response.
func (p *pipeline) begin(ps *parser, sink exporter.RecordSink) {
	p.failed.Store(false)
	if p.serial {
		p.ps, p.sink, p.res = ps, sink, pipeResult{}
		return
	}
	go p.parse(ps, sink)
}

// key copies the raw set key of the allocation that add will pass next.
func (p *pipeline) key(k []byte) {
	if p.cur == nil {
		p.cur = <-p.free
		if p.cur.buf == nil {
			// Sized once: grown by append it would overshoot to twice
			// batchBytes.
			p.cur.buf = make([]byte, 0, batchBytes+32<<10)
		}
	}
	p.keyOff = len(p.cur.buf)
	p.cur.buf = append(p.cur.buf, k...)
}

// add copies the raw allocation object v of set number set, whose key was
// passed to key just before, and hands the batch over when it is full.
func (p *pipeline) add(set int64, v []byte) error {
	b := p.cur
	val := len(b.buf)
	b.buf = append(b.buf, v...)
	b.ents = append(b.ents, rawEntry{set: set, key: p.keyOff, val: val, end: len(b.buf)})
	if len(b.buf) < batchBytes {
		return nil
	}
	p.cur = nil
	if p.serial {
		p.serialBatch(b)
	} else {
		p.work <- b
	}
	// Stop reading a day that cannot be written (disk full, say).
	if p.failed.Load() {
		return errSinkFailed
	}
	return nil
}

// end hands over what is left, waits for the parsing stage to finish, and
// returns the number of allocations written to the sink and the sink's
// error, if any. A key without its allocation (the read failed) is dropped.
func (p *pipeline) end() (int, error) {
	if b := p.cur; b != nil {
		p.cur = nil
		switch n := len(b.ents); {
		case n == 0:
			b.buf = b.buf[:0]
			p.free <- b
		case p.serial:
			p.serialBatch(b)
		default:
			b.buf = b.buf[:b.ents[n-1].end]
			p.work <- b
		}
	}
	if p.serial {
		p.ps, p.sink = nil, nil
		return p.res.n, p.res.err
	}
	p.work <- nil
	r := <-p.done
	return r.n, r.err
}

func (p *pipeline) serialBatch(b *rawBatch) {
	p.batch(b, p.ps, p.sink, &p.res)
	p.free <- b
}

// parse is the parsing stage: it writes every allocation of every batch to
// sink in order, until the nil batch. After a sink error it only recycles
// the batches the reading stage had already queued.
func (p *pipeline) parse(ps *parser, sink exporter.RecordSink) {
	var r pipeResult
	for b := range p.work {
		if b == nil {
			break
		}
		p.batch(b, ps, sink, &r)
		p.free <- b
	}
	p.done <- r
}

// batch writes b's allocations to sink unless r already holds an error,
// counts them in r, and empties b for reuse.
func (p *pipeline) batch(b *rawBatch, ps *parser, sink exporter.RecordSink, r *pipeResult) {
	for _, e := range b.ents {
		if r.err != nil {
			break
		}
		ps.allocation(b.buf[e.key:e.val], b.buf[e.val:e.end], e.set)
		if r.err = sink.Write(ps.rec); r.err != nil {
			p.failed.Store(true)
			break
		}
		r.n++
	}
	b.buf, b.ents = b.buf[:0], b.ents[:0]
	if cap(b.buf) > 4*batchBytes {
		b.buf = nil // one huge allocation must not pin its buffer for good
	}
}
