package kubecost

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// Retries, restarts and splits.

func TestRetryAfter503(t *testing.T) {
	srv := newSim(t, simConfig())
	srv.Sim.SetFaults(kubecostsim.Faults{Mode: kubecostsim.FaultStatus, Status: 503, Times: 1})
	c, logs := newClient(t, srv.URL+"/model/allocation", nil)
	var sink memSink
	st, err := c.FetchDayStats(context.Background(), testDay, &sink)
	if err != nil {
		t.Fatal(err)
	}
	if st.Requests != 2 || st.Retries != 1 || st.Splits != 0 || sink.resets != 0 {
		t.Errorf("stats %+v, resets %d", st, sink.resets)
	}
	checkTruth(t, srv.Sim, time.Hour, &sink)
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "attempt=1") ||
		!strings.Contains(l, "503") || !strings.Contains(l, "delay=") {
		t.Errorf("retry not logged at WARN with attempt, reason and delay:\n%s", l)
	}

	// Retry-After wins over the (tiny) backoff.
	srv.Sim.SetFaults(kubecostsim.Faults{Mode: kubecostsim.FaultStatus, Status: 503, Times: 1, RetryAfter: time.Second})
	t0 := time.Now()
	if err := c.FetchDay(context.Background(), testDay, &memSink{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < 900*time.Millisecond {
		t.Errorf("retried after %v, before Retry-After: 1", d)
	}

	// ... but only up to RetryAfterMax.
	ch := &countingHandler{h: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}}
	srv2 := serve(t, ch.ServeHTTP)
	c2, _ := newClient(t, srv2.URL, func(o *Options) { o.RetryAfterMax = 10 * time.Millisecond; o.Retries = 2; o.Step = 24 * time.Hour })
	t0 = time.Now()
	err = c2.FetchDay(context.Background(), testDay, &memSink{})
	if err == nil || !strings.Contains(err.Error(), "429") || ch.count() != 3 || time.Since(t0) > 5*time.Second {
		t.Errorf("err %v after %d requests in %v", err, ch.count(), time.Since(t0))
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"": 0, "7": 7 * time.Second, " 2 ": 2 * time.Second, "-3": 0, "soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	} {
		if got := retryAfter(h, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestBackoff(t *testing.T) {
	c, _ := newClient(t, "http://kubecost:9090", func(o *Options) { o.BackoffBase, o.BackoffMax = time.Second, 30*time.Second })
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 6: 30 * time.Second, 100: 30 * time.Second} {
		for range 20 {
			if d := c.backoff(attempt, 0); d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v]", attempt, d, want/2, want)
			}
		}
	}
	if d := c.backoff(1, 5*time.Second); d != 5*time.Second {
		t.Errorf("Retry-After 5s gave %v", d)
	}
}

func TestCancelStopsBackoff(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	c, _ := newClient(t, srv.URL, func(o *Options) { o.BackoffBase, o.BackoffMax, o.Retries = time.Minute, time.Minute, 5 })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	t0 := time.Now()
	err := c.FetchDay(ctx, testDay, &memSink{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("FetchDay returned %v after cancel", d)
	}
}

func TestTruncatedBodyResetsSink(t *testing.T) {
	for _, step := range []time.Duration{time.Hour, 24 * time.Hour} {
		srv := newSim(t, simConfig())
		// Cut after ~20 KB: well into the allocations of the first set.
		srv.Sim.SetFaults(kubecostsim.Faults{Mode: kubecostsim.FaultTruncate, TruncateAfter: 20000, Times: 1})
		c, logs := newClient(t, srv.URL+"/model/allocation", func(o *Options) { o.Step = step })
		var sink memSink
		st, err := c.FetchDayStats(context.Background(), testDay, &sink)
		if err != nil {
			t.Fatal(err)
		}
		if sink.resets != 1 || st.Restarts != 1 {
			t.Errorf("step %v: %d resets, stats %+v; want one reset before the refetch", step, sink.resets, st)
		}
		checkTruth(t, srv.Sim, step, &sink)
		if !strings.Contains(logs.String(), "restarting the day") {
			t.Errorf("restart not logged:\n%s", logs)
		}
	}
}

func TestInvalidJSONIsRetried(t *testing.T) {
	srv := newSim(t, simConfig())
	srv.Sim.SetFaults(kubecostsim.Faults{Mode: kubecostsim.FaultInvalidJSON, Times: 2})
	c, _ := newClient(t, srv.URL+"/model/allocation", nil)
	var sink memSink
	st, err := c.FetchDayStats(context.Background(), testDay, &sink)
	if err != nil {
		t.Fatal(err)
	}
	if st.Retries != 2 {
		t.Errorf("stats %+v", st)
	}
	checkTruth(t, srv.Sim, time.Hour, &sink)
}

func TestStalledBodyIsRetried(t *testing.T) {
	var mu sync.Mutex
	first := true
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stall := first
		first = false
		mu.Unlock()
		if stall {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"code":200,"data":[`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		echoHandler(w, r)
	})
	c, _ := newClient(t, srv.URL, func(o *Options) { o.ReadTimeout = 200 * time.Millisecond })
	var sink memSink
	st, err := c.FetchDayStats(context.Background(), testDay, &sink)
	if err != nil || st.Retries != 1 || len(sink.rows) != 24 {
		t.Fatalf("err %v, stats %+v, rows %d", err, st, len(sink.rows))
	}
}

func TestSplitFailingWindows(t *testing.T) {
	ref := newSim(t, simConfig())
	c, _ := newClient(t, ref.URL+"/model/allocation", nil)
	var want memSink
	if err := c.FetchDay(context.Background(), testDay, &want); err != nil {
		t.Fatal(err)
	}

	// A Kubecost that runs out of memory on windows longer than 5 hours.
	cfg := simConfig()
	cfg.Faults.MaxWindowHours = 5
	srv := newSim(t, cfg)
	obs := &outcomes{}
	c, logs := newClient(t, srv.URL+"/model/allocation", func(o *Options) { o.Retries = 1; o.Observer = obs })
	var got memSink
	st, err := c.FetchDayStats(context.Background(), testDay, &got)
	if err != nil {
		t.Fatal(err)
	}
	// 24 → 12+12 → 6+6+6+6 → 3+3 ×4.
	if st.Splits != 7 || got.resets != 0 {
		t.Errorf("stats %+v, resets %d", st, got.resets)
	}
	// The full day is retried once, then split; halves split at once.
	wantOut := map[Outcome]int64{OutcomeOK: 8, OutcomeRetried: 1, OutcomeSplit: 7, OutcomeFailed: 0}
	var total int64
	for o, n := range wantOut {
		total += obs.get(o)
		if obs.get(o) != n {
			t.Errorf("observer saw %d %s requests, want %d", obs.get(o), o, n)
		}
	}
	if total != st.Requests {
		t.Errorf("observer saw %d requests, the client sent %d", total, st.Requests)
	}
	sameRows(t, &want, &got)
	checkTruth(t, srv.Sim, time.Hour, &got)
	if l := logs.String(); !strings.Contains(l, "splitting") || !strings.Contains(l, "window=2026-11-01T00:00:00Z,2026-11-02T00:00:00Z") {
		t.Errorf("split not logged with its window:\n%s", l)
	}
	for _, r := range srv.Sim.Requests() {
		s, e, _ := strings.Cut(r.Query.Get("window"), ",")
		ts, _ := time.Parse(time.RFC3339, s)
		te, _ := time.Parse(time.RFC3339, e)
		if ts.Minute() != 0 || te.Minute() != 0 {
			t.Errorf("window %s is not hour-aligned", r.Query.Get("window"))
		}
	}
}

// A Kubecost whose long responses break midway: rows already written must
// be discarded, and the day refetched with the window split.
func TestSplitAfterPartialBody(t *testing.T) {
	cfg := simConfig()
	sim := kubecostsim.New(cfg)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s, e, _ := strings.Cut(q.Get("window"), ",")
		ts, _ := time.Parse(time.RFC3339, s)
		te, _ := time.Parse(time.RFC3339, e)
		w.Header().Set("Content-Type", "application/json")
		var out io.Writer = w
		if te.Sub(ts) > 8*time.Hour {
			out = &cutWriter{w: w, left: 30000}
		}
		_ = sim.WriteResponse(out, q)
	})
	c, _ := newClient(t, srv.URL, func(o *Options) { o.Paginate = false })
	var got memSink
	st, err := c.FetchDayStats(context.Background(), testDay, &got)
	if err != nil {
		t.Fatal(err)
	}
	// 24h fails midway → reset, 12+12; the first 12h fails midway → reset,
	// 6+6+12; the second 12h fails after 6+6 were written → reset, 6+6+6+6.
	if got.resets != 3 || st.Restarts != 3 || st.Splits != 3 {
		t.Errorf("resets %d, stats %+v", got.resets, st)
	}
	checkTruth(t, sim, time.Hour, &got)
}

// cutWriter writes the first left bytes, then fails like a dropped connection.
type cutWriter struct {
	w    io.Writer
	left int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.ErrClosedPipe
	}
	n := min(len(p), c.left)
	c.left -= n
	if _, err := c.w.Write(p[:n]); err != nil {
		return 0, err
	}
	if n < len(p) {
		return n, io.ErrClosedPipe
	}
	return n, nil
}

func sameRows(t *testing.T, want, got *memSink) {
	t.Helper()
	if !slices.Equal(want.names(), got.names()) {
		t.Errorf("row names differ: %d vs %d rows", len(want.rows), len(got.rows))
	}
	w, g := want.byNamespace(), got.byNamespace()
	if len(w) != len(g) {
		t.Errorf("namespaces %v vs %v", slices.Sorted(maps.Keys(w)), slices.Sorted(maps.Keys(g)))
	}
	for ns, v := range w {
		if g[ns] != v {
			t.Errorf("namespace %q totalCost %v, want %v", ns, g[ns], v)
		}
	}
}

func TestDailyFailureSuggestsHourly(t *testing.T) {
	cfg := simConfig()
	cfg.Faults.MaxWindowHours = 5
	srv := newSim(t, cfg)
	c, _ := newClient(t, srv.URL+"/model/allocation", func(o *Options) { o.Step = 24 * time.Hour; o.Retries = 2 })
	var sink memSink
	st, err := c.FetchDayStats(context.Background(), testDay, &sink)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"GRANULARITY=hourly", "KUBECOST_ALLOCATION_API_PAGINATE=true", "exceeds memory", "HTTP 500"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if st.Splits != 0 || st.Requests != 3 {
		t.Errorf("stats %+v: a daily window must be retried, never split", st)
	}
}

// outcomes is an Observer that counts.
type outcomes struct {
	mu sync.Mutex
	n  map[Outcome]int64
}

func (o *outcomes) ObserveRequest(oc Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[Outcome]int64{}
	}
	o.n[oc]++
}

func (o *outcomes) get(oc Outcome) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[oc]
}
