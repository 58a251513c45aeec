package app_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// memStore is an in-memory exporter.ObjectStore. TestMemStore runs the
// store acceptance suite on it, so the orchestrator tests lean on a store
// that behaves like the real ones.
type memStore struct {
	mu   sync.Mutex
	objs map[string]memObject
	puts int
}

type memObject struct {
	data []byte
	meta map[string]string
	etag string
}

var _ exporter.ObjectStore = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{objs: map[string]memObject{}} }

func (s *memStore) List(ctx context.Context, prefix, startAfter string, fn func(exporter.ObjectInfo) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	var infos []exporter.ObjectInfo
	for k, o := range s.objs {
		if strings.HasPrefix(k, prefix) && k > startAfter {
			infos = append(infos, exporter.ObjectInfo{Key: k, Size: int64(len(o.data)), ETag: o.etag})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(infos, func(a, b exporter.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	for _, oi := range infos {
		if err := fn(oi); err != nil {
			return err
		}
	}
	return nil
}

func (s *memStore) Put(ctx context.Context, key string, r io.Reader, meta map[string]string, cond exporter.Precondition) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("mem: put %s: %w", key, err)
	}
	// Whole or nothing: a Put whose ctx ended while reading stores nothing.
	if err := ctx.Err(); err != nil {
		return err
	}
	// Metadata keys read back in lower case, as from S3.
	lower := make(map[string]string, len(meta))
	for k, v := range meta {
		lower[strings.ToLower(k)] = v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, exists := s.objs[key]
	if (cond.IfNoneMatch && exists) || (cond.IfMatch != "" && (!exists || old.etag != cond.IfMatch)) {
		return fmt.Errorf("mem: put %s: %w", key, exporter.ErrPreconditionFailed)
	}
	s.puts++
	s.objs[key] = memObject{data: data, meta: lower, etag: fmt.Sprintf(`"v%d"`, s.puts)}
	return nil
}

func (s *memStore) Head(ctx context.Context, key string) (exporter.ObjectAttrs, error) {
	if err := ctx.Err(); err != nil {
		return exporter.ObjectAttrs{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	if !ok {
		return exporter.ObjectAttrs{}, fmt.Errorf("mem: head %s: %w", key, exporter.ErrNotExist)
	}
	return exporter.ObjectAttrs{Size: int64(len(o.data)), ETag: o.etag, Metadata: maps.Clone(o.meta)}, nil
}

func (s *memStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	if !ok {
		return nil, fmt.Errorf("mem: open %s: %w", key, exporter.ErrNotExist)
	}
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

func (s *memStore) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objs, key)
	return nil
}

// object returns the stored object under key.
func (s *memStore) object(key string) (memObject, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	return o, ok
}

// keys returns every stored key, sorted.
func (s *memStore) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.objs))
}

func (s *memStore) putCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.puts
}

// fetchFunc scripts one day of the fake source: it writes rows into sink
// the way a real source would, including Reset before a refetch.
type fetchFunc func(ctx context.Context, sink exporter.RecordSink) error

// memSource is an in-memory exporter.AllocationSource. A day is available
// when it has an entry in days; rows returns the names written for it.
type memSource struct {
	days      map[time.Time]fetchFunc
	totals    map[time.Time]float64 // Kubecost's day totals; absent = 0
	availErr  error
	mu        sync.Mutex
	fetched   []time.Time // days FetchDay was called for, in call order
	availFrom time.Time
	availTo   time.Time
}

var _ exporter.AllocationSource = (*memSource)(nil)

func (s *memSource) AvailableDays(ctx context.Context, from, to time.Time) ([]exporter.DayTotal, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.availErr != nil {
		return nil, s.availErr
	}
	s.mu.Lock()
	s.availFrom, s.availTo = from, to
	s.mu.Unlock()
	var out []exporter.DayTotal
	for d := range s.days {
		if !d.Before(from) && d.Before(to) {
			out = append(out, exporter.DayTotal{Day: d, TotalCost: s.totals[d]})
		}
	}
	slices.SortFunc(out, func(a, b exporter.DayTotal) int { return a.Day.Compare(b.Day) })
	return out, nil
}

func (s *memSource) FetchDay(ctx context.Context, day time.Time, sink exporter.RecordSink) error {
	s.mu.Lock()
	s.fetched = append(s.fetched, day)
	s.mu.Unlock()
	fn, ok := s.days[day]
	if !ok {
		return fmt.Errorf("mem: no day %s", day.Format(time.DateOnly))
	}
	return fn(ctx, sink)
}

func (s *memSource) fetchedDays() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.fetched)
}

// rows returns a fetchFunc that writes n rows named <prefix>-<i>.
func rows(prefix string, n int) fetchFunc {
	return func(ctx context.Context, sink exporter.RecordSink) error {
		return writeRows(ctx, sink, prefix, n)
	}
}

func writeRows(ctx context.Context, sink exporter.RecordSink, prefix string, n int) error {
	var r schema.Record
	for i := range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.Name = fmt.Sprintf("%s-%d", prefix, i)
		if err := sink.Write(&r); err != nil {
			return err
		}
	}
	return nil
}

// lineEncoder is an app.Encoder writing one line per record name, so tests
// can read back exactly which rows a stored day holds.
type lineEncoder struct {
	w      io.Writer
	rows   int64
	failAt int64 // fail the Write of this row (1-based); 0 never
}

func (e *lineEncoder) Write(r *schema.Record) error {
	if e.rows+1 == e.failAt {
		return errDiskFull
	}
	if _, err := io.WriteString(e.w, r.Name+"\n"); err != nil {
		return err
	}
	e.rows++
	return nil
}

func (e *lineEncoder) Close() error { return nil }
func (e *lineEncoder) Rows() int64  { return e.rows }

var errDiskFull = errors.New("no space left on device")

func lineEncoders(failAt int64) app.EncoderFactory {
	return func(w io.Writer) (app.Encoder, error) { return &lineEncoder{w: w, failAt: failAt}, nil }
}

// names is the stored day file's rows.
func names(o memObject) []string {
	return strings.Fields(string(o.data))
}

// wantNames is the rows of rows(prefix, n).
func wantNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}
