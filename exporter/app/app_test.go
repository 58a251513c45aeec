package app_test

// Fast tests of the orchestrator: planning wiring, the worker pool and the
// day sink's Reset and abort paths, against an in-memory source and store
// (fakes_test.go). They assert only what Run makes observable: what is
// stored, the summary and the error.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/storetest"
)

const backfillDays = 7

var (
	now    = time.Date(2026, 11, 20, 5, 30, 0, 0, time.UTC)
	layout = exporter.Layout{Account: "111122223333", Region: "us-east-1", Cluster: "prod"}
)

// windowDays is every day the run at now may export, oldest first.
func windowDays(t *testing.T) []time.Time {
	t.Helper()
	first, last := exporter.Window(now, backfillDays, exporter.DefaultSettle)
	var out []time.Time
	for d := first; !d.After(last); d = d.Add(24 * time.Hour) {
		out = append(out, d)
	}
	if len(out) < 4 {
		t.Fatalf("the window holds %d days; the tests need 4", len(out))
	}
	return out
}

func options(src exporter.AllocationSource, store exporter.ObjectStore) app.Options {
	return app.Options{
		Clusters: []app.Cluster{{
			Source: src, Layout: layout, NewEncoder: lineEncoders(0),
			Projection:  schema.NewProjection("arn:aws:eks:us-east-1:111122223333:cluster/prod", "prod", nil, nil),
			Fingerprint: testFingerprint,
		}},
		Available: app.SourceDays(src),
		Store:     store, Codec: exporter.Snappy,
		BackfillDays: backfillDays,
		Settle:       exporter.DefaultSettle,
		Reexport:     app.Reexport{OnConfigChange: true, DriftTolerance: 0.001},
		Now:          func() time.Time { return now },
	}
}

const testFingerprint = "0123456789abcdef"

func key(d time.Time) string { return layout.Key(d, exporter.Snappy) }

func TestMemStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(*testing.T) exporter.ObjectStore { return newMemStore() },
		storetest.WithLargeSize(1<<20), storetest.WithFailAfter(256<<10), storetest.WithManyKeys(50))
}

func TestRun(t *testing.T) {
	t.Parallel()
	days := windowDays(t)
	d0, d1, d2, d3 := days[0], days[1], days[2], days[3]

	type tc struct {
		name    string
		source  map[time.Time]fetchFunc
		stored  map[time.Time]string // day -> content already in the store
		opts    func(*app.Options)
		want    map[time.Time][]string // day -> rows stored after the run
		fetched []time.Time            // days fetched, in order (Concurrency 1)
		failed  []time.Time
		wantErr error
	}
	cases := []tc{
		{
			name:    "exports the missing days oldest first",
			source:  map[time.Time]fetchFunc{d2: rows("c", 3), d0: rows("a", 2), d1: rows("b", 1)},
			stored:  map[time.Time]string{d1: "old\n"},
			want:    map[time.Time][]string{d0: wantNames("a", 2), d1: {"old"}, d2: wantNames("c", 3)},
			fetched: []time.Time{d0, d2},
		},
		{
			// 300 rows are past one batch, so the first attempt reached the
			// encoder before the body broke; the file must hold only the
			// second attempt.
			name: "source fails mid-body and retries through Reset",
			source: map[time.Time]fetchFunc{d0: func(ctx context.Context, sink exporter.RecordSink) error {
				if err := writeRows(ctx, sink, "broken", 300); err != nil {
					return err
				}
				if err := sink.Reset(); err != nil {
					return err
				}
				return writeRows(ctx, sink, "retry", 700)
			}},
			want:    map[time.Time][]string{d0: wantNames("retry", 700)},
			fetched: []time.Time{d0},
		},
		{
			name: "source fails for good after rows: nothing stored",
			source: map[time.Time]fetchFunc{d0: rows("a", 1), d1: func(ctx context.Context, sink exporter.RecordSink) error {
				if err := writeRows(ctx, sink, "partial", 600); err != nil {
					return err
				}
				return errors.New("unexpected EOF")
			}, d2: rows("c", 1)},
			want:    map[time.Time][]string{d0: wantNames("a", 1), d2: wantNames("c", 1)},
			fetched: []time.Time{d0, d1, d2},
			failed:  []time.Time{d1},
			wantErr: app.ErrDaysFailed,
		},
		{
			name:    "dry run fetches and writes nothing",
			source:  map[time.Time]fetchFunc{d0: rows("a", 1), d1: rows("b", 1)},
			opts:    func(o *app.Options) { o.DryRun = true },
			want:    map[time.Time][]string{},
			fetched: nil,
		},
		{
			name:   "forced days are exported again when Kubecost has them",
			source: map[time.Time]fetchFunc{d0: rows("a", 2), d1: rows("b", 2)},
			stored: map[time.Time]string{d0: "old\n", d1: "old\n"},
			opts: func(o *app.Options) {
				// Any time of day names the day; d3 is not available.
				o.ForceDays = []time.Time{d1.Add(13 * time.Hour), d3}
			},
			want:    map[time.Time][]string{d0: {"old"}, d1: wantNames("b", 2)},
			fetched: []time.Time{d1},
		},
		{
			name:    "a day with zero rows fails and stores nothing",
			source:  map[time.Time]fetchFunc{d0: rows("a", 0), d1: rows("b", 1)},
			want:    map[time.Time][]string{d1: wantNames("b", 1)},
			fetched: []time.Time{d0, d1},
			failed:  []time.Time{d0},
			wantErr: app.ErrDaysFailed,
		},
		{
			name:    "an encoder failure aborts the day",
			source:  map[time.Time]fetchFunc{d0: rows("a", 1000)},
			opts:    func(o *app.Options) { o.Clusters[0].NewEncoder = lineEncoders(10) },
			want:    map[time.Time][]string{},
			fetched: []time.Time{d0},
			failed:  []time.Time{d0},
			wantErr: errDiskFull,
		},
		{
			name:    "nothing to do when every day is stored",
			source:  map[time.Time]fetchFunc{d0: rows("a", 1)},
			stored:  map[time.Time]string{d0: "old\n"},
			want:    map[time.Time][]string{d0: {"old"}},
			fetched: nil,
		},
		{
			name:    "nothing available",
			source:  map[time.Time]fetchFunc{},
			want:    map[time.Time][]string{},
			fetched: nil,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := &memSource{days: c.source}
			store := newMemStore()
			for d, content := range c.stored {
				if err := store.Put(t.Context(), key(d), strings.NewReader(content), nil, exporter.Precondition{}); err != nil {
					t.Fatal(err)
				}
			}
			o := options(src, store)
			if c.opts != nil {
				c.opts(&o)
			}
			sum, err := app.Run(t.Context(), o)
			if !errors.Is(err, c.wantErr) || (c.wantErr == nil) != (err == nil) {
				t.Fatalf("Run error = %v, want %v", err, c.wantErr)
			}
			if c.wantErr != nil && !errors.Is(err, app.ErrDaysFailed) {
				t.Errorf("Run error %v does not wrap ErrDaysFailed", err)
			}
			if got := src.fetchedDays(); !slices.EqualFunc(got, c.fetched, time.Time.Equal) {
				t.Errorf("fetched %v, want %v", dates(got), dates(c.fetched))
			}
			assertStored(t, store, c.want)
			var failed []time.Time
			for _, f := range sum.Failed() {
				failed = append(failed, f.Day)
			}
			if !slices.EqualFunc(failed, c.failed, time.Time.Equal) {
				t.Errorf("summary failed days %v, want %v", dates(failed), dates(c.failed))
			}
			days, rows, _ := sum.Written()
			if wantDays := len(c.fetched) - len(c.failed); !o.DryRun && days != wantDays {
				t.Errorf("summary written days = %d, want %d", days, wantDays)
			}
			var wantRows int64
			for _, d := range c.fetched {
				if !slices.ContainsFunc(c.failed, d.Equal) {
					wantRows += int64(len(c.want[d]))
				}
			}
			if rows != wantRows {
				t.Errorf("summary rows = %d, want %d", rows, wantRows)
			}
		})
	}
}

// TestRunDryRunPlans checks that a dry run still reports the plan.
func TestRunDryRunPlans(t *testing.T) {
	t.Parallel()
	days := windowDays(t)
	src := &memSource{days: map[time.Time]fetchFunc{days[0]: rows("a", 1), days[2]: rows("c", 1)}}
	store := newMemStore()
	o := options(src, store)
	o.DryRun = true
	sum, err := app.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var planned []time.Time
	for _, d := range sum.Clusters[0].Plan.Exports() {
		planned = append(planned, d.Day)
	}
	if want := []time.Time{days[0], days[2]}; !slices.EqualFunc(planned, want, time.Time.Equal) {
		t.Errorf("dry run planned %v, want %v", dates(planned), dates(want))
	}
	if len(sum.Clusters[0].Days) != 0 || store.putCount() != 0 {
		t.Errorf("dry run exported %d days and made %d Puts", len(sum.Clusters[0].Days), store.putCount())
	}
}

// TestRunConcurrency runs three days at once, with one of them failing:
// the other days are stored and the failure is reported. The first three
// fetches wait for each other, so the test fails (instead of passing by
// luck) when fewer than three run at once.
func TestRunConcurrency(t *testing.T) {
	t.Parallel()
	const workers = 3
	days := windowDays(t)
	var (
		mu       sync.Mutex
		inflight int
		peak     int
		arrived  int
		release  = make(chan struct{})
	)
	gate := func(ctx context.Context) error {
		mu.Lock()
		inflight++
		peak = max(peak, inflight)
		arrived++
		if arrived == workers {
			close(release)
		}
		mu.Unlock()
		defer func() { mu.Lock(); inflight--; mu.Unlock() }()
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
			return fmt.Errorf("only %d fetches ever ran at once, want %d", arrived, workers)
		}
	}
	src := &memSource{days: map[time.Time]fetchFunc{}}
	want := map[time.Time][]string{}
	for i, d := range days {
		name := "day" + strconv.Itoa(i)
		src.days[d] = func(ctx context.Context, sink exporter.RecordSink) error {
			if err := gate(ctx); err != nil {
				return err
			}
			if i == 1 {
				if err := writeRows(ctx, sink, name, 400); err != nil {
					return err
				}
				return errors.New("connection reset by peer")
			}
			return writeRows(ctx, sink, name, 300+i)
		}
		if i != 1 {
			want[d] = wantNames(name, 300+i)
		}
	}
	store := newMemStore()
	o := options(src, store)
	o.Concurrency = workers
	sum, err := app.Run(t.Context(), o)
	if !errors.Is(err, app.ErrDaysFailed) {
		t.Fatalf("Run error = %v, want ErrDaysFailed", err)
	}
	assertStored(t, store, want)
	if f := sum.Failed(); len(f) != 1 || !f[0].Day.Equal(days[1]) {
		t.Errorf("failed days = %v, want only %s", f, days[1].Format(time.DateOnly))
	}
	if n, _, _ := sum.Written(); n != len(days)-1 {
		t.Errorf("written days = %d, want %d", n, len(days)-1)
	}
	mu.Lock()
	defer mu.Unlock()
	if peak != workers {
		t.Errorf("peak fetches at once = %d, want %d", peak, workers)
	}
}

// TestRunCancelled cancels the run while the second day is being fetched:
// the first day stays stored, no later day is started, and the error says
// the run was cancelled.
func TestRunCancelled(t *testing.T) {
	t.Parallel()
	days := windowDays(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	src := &memSource{days: map[time.Time]fetchFunc{}}
	for i, d := range days {
		src.days[d] = func(ctx context.Context, sink exporter.RecordSink) error {
			if i == 1 {
				if err := writeRows(ctx, sink, "partial", 300); err != nil {
					return err
				}
				cancel() // as SIGTERM would, mid-body
			}
			return writeRows(ctx, sink, "day"+strconv.Itoa(i), 10)
		}
	}
	store := newMemStore()
	sum, err := app.Run(ctx, options(src, store))
	if !errors.Is(err, app.ErrDaysFailed) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want ErrDaysFailed wrapping context.Canceled", err)
	}
	if got := src.fetchedDays(); !slices.EqualFunc(got, days[:2], time.Time.Equal) {
		t.Errorf("fetched %v, want only the first two days", dates(got))
	}
	assertStored(t, store, map[time.Time][]string{days[0]: wantNames("day0", 10)})
	if f := sum.Failed(); len(f) != len(days)-1 {
		t.Errorf("%d days reported failed, want %d", len(f), len(days)-1)
	}
	for _, f := range sum.Failed() {
		if !errors.Is(f.Err, context.Canceled) {
			t.Errorf("day %s failed with %v, want context.Canceled", f.Day.Format(time.DateOnly), f.Err)
		}
	}
}

// TestRunPlanningErrors checks that a failure before any day is exported
// is returned as is, not as a failed day.
func TestRunPlanningErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("kubecost: 503")
	src := &memSource{availErr: boom}
	_, err := app.Run(t.Context(), options(src, newMemStore()))
	if !errors.Is(err, boom) || errors.Is(err, app.ErrDaysFailed) {
		t.Fatalf("Run error = %v, want the source's error", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = app.Run(ctx, options(&memSource{}, newMemStore()))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestRunMetadata checks the object metadata of a stored day and that the
// caller's metadata map is not modified.
func TestRunMetadata(t *testing.T) {
	t.Parallel()
	days := windowDays(t)
	d := days[0]
	src := &memSource{days: map[time.Time]fetchFunc{d: rows("a", 5)}, totals: map[time.Time]float64{d: 12.5}}
	store := newMemStore()
	o := options(src, store)
	o.Clusters[0].Metadata = map[string]string{"cluster": "prod"}
	if _, err := app.Run(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	obj, ok := store.object(key(d))
	if !ok {
		t.Fatalf("%s not stored", key(d))
	}
	want := map[string]string{
		"cluster":            "prod",
		"rows":               "5",
		"window-start":       d.Format(time.RFC3339),
		"window-end":         d.Add(24 * time.Hour).Format(time.RFC3339),
		"schema-version":     schema.Version,
		"exporter-version":   exporter.Version,
		"config-fingerprint": testFingerprint,
		"kubecost-day-total": "12.5",
	}
	for k, v := range want {
		if obj.meta[k] != v {
			t.Errorf("metadata %s = %q, want %q", k, obj.meta[k], v)
		}
	}
	if len(o.Clusters[0].Metadata) != 1 {
		t.Errorf("Run modified the caller's metadata map: %v", o.Clusters[0].Metadata)
	}
	// The window Kubecost was asked about ends after the last day.
	first, last := exporter.Window(now, backfillDays, exporter.DefaultSettle)
	if !src.availFrom.Equal(first) || !src.availTo.Equal(last.Add(24*time.Hour)) {
		t.Errorf("AvailableDays asked for [%s, %s), want [%s, %s)", src.availFrom, src.availTo, first, last.Add(24*time.Hour))
	}
}

func assertStored(t *testing.T, store *memStore, want map[time.Time][]string) {
	t.Helper()
	var wantKeys []string
	for d := range want {
		wantKeys = append(wantKeys, key(d))
	}
	slices.Sort(wantKeys)
	if got := store.keys(); !slices.Equal(got, wantKeys) {
		t.Fatalf("stored keys %q, want %q", got, wantKeys)
	}
	for d, rows := range want {
		obj, _ := store.object(key(d))
		if got := names(obj); !slices.Equal(got, rows) {
			t.Errorf("%s holds %d rows (first %q), want %d (first %q)", d.Format(time.DateOnly), len(got), first(got), len(rows), first(rows))
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func dates(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Format(time.DateOnly)
	}
	return out
}
