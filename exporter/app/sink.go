package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Encoder turns records into one Parquet file.
type Encoder interface {
	Write(r *schema.Record) error
	Close() error // flushes the footer; does not close the underlying writer
	Rows() int64
}

// EncoderFactory starts a Parquet file on w.
type EncoderFactory func(w io.Writer) (Encoder, error)

// Batches decouple the decoder (Write's caller) from the encoder goroutine, so decoding and
// encoding use both cores; batchLen×(batches+1) records bound memory however large the day.
// A handoff can wake the other thread, tens of microseconds on a VM: 512 records (5 MB more
// than 256 at 24k) beat 256 and 64; 1024 was little faster again for 16 MB more
// (docs/performance.md, "One pass, and fewer wake-ups").
const (
	batchLen = 512
	batches  = 3
)

// daySink spools one day's Parquet file to a temp file, not memory, uploaded only once
// complete: the metadata can carry the row count, and partial data stays out of the bucket.
type daySink struct {
	proj       *schema.Projection
	newEncoder EncoderFactory
	file       *os.File

	batch   []schema.Record
	n       int
	work    chan []schema.Record
	free    chan []schema.Record
	done    chan error
	failed  atomic.Pointer[error] // the encoder's error, seen by Write at the next flush
	rows    int64
	started bool
}

var _ exporter.RecordSink = (*daySink)(nil)

func newDaySink(file *os.File, proj *schema.Projection, newEncoder EncoderFactory) (*daySink, error) {
	s := &daySink{proj: proj, newEncoder: newEncoder, file: file}
	return s, s.start()
}

func (s *daySink) newBatch() []schema.Record {
	b := make([]schema.Record, batchLen)
	for i := range b {
		b[i] = *s.proj.NewRecord()
	}
	return b
}

// start begins a fresh Parquet file at offset 0 with an encoder goroutine.
func (s *daySink) start() error {
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := s.file.Truncate(0); err != nil {
		return err
	}
	enc, err := s.newEncoder(s.file)
	if err != nil {
		return err
	}
	s.work = make(chan []schema.Record, batches)
	s.free = make(chan []schema.Record, batches+1)
	for i := 0; i < batches; i++ {
		s.free <- s.newBatch()
	}
	s.batch, s.n = s.newBatch(), 0
	s.done = make(chan error, 1)
	s.failed.Store(nil)
	s.started = true
	go func(work <-chan []schema.Record, free chan<- []schema.Record, done chan<- error) {
		var err error
		for b := range work {
			for i := range b {
				if err != nil {
					break
				}
				err = enc.Write(&b[i])
			}
			if err != nil {
				s.failed.Store(&err)
			}
			free <- b[:cap(b)]
		}
		// Close also after a failed Write, to release the encoder's page spool files.
		if cerr := enc.Close(); err == nil {
			err = cerr
		}
		s.rows = enc.Rows() // read after done, which orders it
		done <- err
	}(s.work, s.free, s.done)
	return nil
}

// Write copies r into the current batch, blocking when the encoder is behind (back-pressure).
func (s *daySink) Write(r *schema.Record) error {
	s.batch[s.n].CopyFrom(r)
	s.n++
	if s.n == len(s.batch) {
		return s.flush()
	}
	return nil
}

func (s *daySink) flush() error {
	s.work <- s.batch[:s.n]
	s.batch, s.n = <-s.free, 0
	// Stop the decoder early when the encoder failed (disk full, say).
	if err := s.failed.Load(); err != nil {
		return fmt.Errorf("encode: %w", *err)
	}
	return nil
}

// Reset discards the day so far and starts a new file.
func (s *daySink) Reset() error {
	s.abort()
	return s.start()
}

// Close finishes the file and returns the row count.
func (s *daySink) Close() (int64, error) {
	if !s.started {
		return 0, errors.New("sink not started")
	}
	if s.n > 0 {
		s.work <- s.batch[:s.n]
		s.n = 0
	}
	close(s.work)
	s.started = false
	if err := <-s.done; err != nil {
		return 0, fmt.Errorf("encode: %w", err)
	}
	return s.rows, nil
}

// abort stops the encoder after the rows so far; it still closes the file (releasing its
// page spool), a valid Parquet file of part of the day that the caller discards.
func (s *daySink) abort() {
	if s.started {
		close(s.work)
		<-s.done
		s.started = false
	}
}
