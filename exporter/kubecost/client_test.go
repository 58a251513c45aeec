package kubecost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

func TestNewValidates(t *testing.T) {
	ok := Options{URL: "http://kubecost:9090/model/allocation", Aggregate: "cluster", Step: time.Hour, Projection: testProjection()}
	for name, mod := range map[string]func(*Options){
		"url":        func(o *Options) { o.URL = "kubecost:9090" },
		"aggregate":  func(o *Options) { o.Aggregate = "" },
		"step":       func(o *Options) { o.Step = 2 * time.Hour },
		"projection": func(o *Options) { o.Projection = nil },
		"retries":    func(o *Options) { o.Retries = -1 },
	} {
		o := ok
		mod(&o)
		if _, err := New(o); err == nil {
			t.Errorf("%s: New accepted %+v", name, o)
		}
	}
	if _, err := New(ok); err != nil {
		t.Fatal(err)
	}
}

// echoHandler answers every query with one allocation per step of the
// requested window, each stamped with its own window.
func echoHandler(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	start, end, _ := strings.Cut(q.Get("window"), ",")
	s, _ := time.Parse(time.RFC3339, start)
	e, _ := time.Parse(time.RFC3339, end)
	step := 24 * time.Hour
	if q.Get("step") == "1h" {
		step = time.Hour
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"code":200,"data":[`)
	for t := s; t.Before(e); t = t.Add(step) {
		if t != s {
			io.WriteString(w, ",")
		}
		fmt.Fprintf(w, `{"c/ns/pod":{"name":"c/ns/pod","properties":{"namespace":"ns"},"window":{"start":%q,"end":%q},"totalCost":1}}`,
			t.Format(time.RFC3339), t.Add(step).Format(time.RFC3339))
	}
	io.WriteString(w, `]}`)
}

func TestQueryParams(t *testing.T) {
	aggregations := map[string]string{
		"container": containerAggregate, "pod": "pod", "namespace": "namespace", "controller": "controller",
		"controllerKind": "controllerKind", "node": "node", "cluster": "cluster",
	}
	for _, agg := range slices.Sorted(maps.Keys(aggregations)) {
		for _, step := range []time.Duration{24 * time.Hour, time.Hour} {
			for _, paginate := range []bool{false, true} {
				name := fmt.Sprintf("%s/%v/paginate=%v", agg, step, paginate)
				t.Run(name, func(t *testing.T) {
					var mu sync.Mutex
					var got []url.Values
					srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
						mu.Lock()
						got = append(got, r.URL.Query())
						mu.Unlock()
						if r.URL.Path != "/model/allocation" {
							http.NotFound(w, r)
							return
						}
						echoHandler(w, r)
					})
					c, _ := newClient(t, srv.URL+"/model/allocation", func(o *Options) {
						o.Aggregate, o.Step, o.Paginate = aggregations[agg], step, paginate
					})
					var sink memSink
					if err := c.FetchDay(context.Background(), testDay, &sink); err != nil {
						t.Fatal(err)
					}
					var windows []string
					if step == time.Hour && paginate {
						for h := range 24 {
							s := testDay.Add(time.Duration(h) * time.Hour)
							windows = append(windows, s.Format(time.RFC3339)+","+s.Add(time.Hour).Format(time.RFC3339))
						}
					} else {
						windows = []string{"2026-11-01T00:00:00Z,2026-11-02T00:00:00Z"}
					}
					if len(got) != len(windows) {
						t.Fatalf("%d requests, want %d", len(got), len(windows))
					}
					stepParam := map[time.Duration]string{time.Hour: "1h", 24 * time.Hour: "1d"}[step]
					for i, q := range got {
						want := url.Values{
							"window": {windows[i]}, "aggregate": {aggregations[agg]}, "step": {stepParam},
							"accumulate": {"false"}, "idle": {"true"}, "splitIdle": {"true"},
							"idleByNode": {"true"}, "shareTenancyCosts": {"true"},
						}
						if q.Encode() != want.Encode() {
							t.Errorf("request %d:\n got %s\nwant %s", i, q.Encode(), want.Encode())
						}
					}
					wantRows := 1
					if step == time.Hour {
						wantRows = 24
					}
					if len(sink.rows) != wantRows {
						t.Errorf("%d rows, want %d", len(sink.rows), wantRows)
					}
				})
			}
		}
	}
}

func TestUserQueryAndHeaders(t *testing.T) {
	var hdr http.Header
	var query url.Values
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		hdr, query = r.Header, r.URL.Query()
		echoHandler(w, r)
	})
	c, logs := newClient(t, srv.URL+"/model/allocation?filterClusters=one", func(o *Options) {
		o.BearerToken = "s3cr3t-t0ken"
		o.Step = 24 * time.Hour
	})
	if err := c.FetchDay(context.Background(), testDay, &memSink{}); err != nil {
		t.Fatal(err)
	}
	if got := hdr.Get("Authorization"); got != "Bearer s3cr3t-t0ken" {
		t.Errorf("Authorization = %q", got)
	}
	if query.Get("filterClusters") != "one" || query.Get("step") != "1d" {
		t.Errorf("query %v: the URL's own parameters must be kept", query)
	}
	if strings.Contains(logs.String(), "s3cr3t") {
		t.Errorf("the bearer token leaked into the logs:\n%s", logs)
	}
}

func TestFetchDayMatchesSimulator(t *testing.T) {
	cfg := simConfig()
	cfg.Quirks = kubecostsim.Quirks{NullNumbers: true, NegativeZero: true, OffsetTimes: true, NaNStrings: true, ExtraFields: true}
	srv := newSim(t, cfg)
	for _, step := range []time.Duration{time.Hour, 24 * time.Hour} {
		c, _ := newClient(t, srv.URL+"/model/allocation", func(o *Options) { o.Step = step })
		var sink memSink
		st, err := c.FetchDayStats(context.Background(), testDay, &sink)
		if err != nil {
			t.Fatal(err)
		}
		checkTruth(t, srv.Sim, step, &sink)
		if st.Requests != 1 || st.Retries != 0 || st.Bytes == 0 || st.Allocations != int64(len(sink.rows)) {
			t.Errorf("stats %+v", st)
		}
		for _, r := range sink.rows {
			if r.Start%step.Milliseconds() != 0 || r.End-r.Start != step.Milliseconds() {
				t.Fatalf("%s: window %v..%v is not one UTC step", r.Name, time.UnixMilli(r.Start).UTC(), time.UnixMilli(r.End).UTC())
			}
		}
	}
}

// checkTruth compares the rows of testDay with what the simulator says a
// correct client finds.
func checkTruth(t *testing.T, sim *kubecostsim.Sim, step time.Duration, sink *memSink) {
	t.Helper()
	sets, err := sim.TruthFor(url.Values{
		"window":    {"2026-11-01T00:00:00Z,2026-11-02T00:00:00Z"},
		"aggregate": {containerAggregate}, "step": {stepParam(step)}, "accumulate": {"false"},
		"idle": {"true"}, "splitIdle": {"true"}, "idleByNode": {"true"}, "shareTenancyCosts": {"true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	count, total, byNS := 0, 0.0, map[string]float64{}
	for _, s := range sets {
		count += s.Count
		total += s.TotalCost
		for k, v := range s.ByNamespace {
			byNS[k] += v
		}
	}
	if count == 0 || len(sink.rows) != count {
		t.Fatalf("step %v: %d rows, want %d", step, len(sink.rows), count)
	}
	got := sink.byNamespace()
	for ns, want := range byNS {
		if math.Abs(got[ns]-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("step %v: namespace %q totalCost %v, want %v", step, ns, got[ns], want)
		}
	}
}

func TestHTMLIsNotRetried(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"login page": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "\n  <!DOCTYPE html>\n<html><head><title>Kubecost</title></head><body>\x00\x1b[31m sign in please ...................................</body></html>")
		},
		"json content type": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "<html>UI</html>")
		},
		"html 404": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "<html>no such page</html>")
		},
	} {
		t.Run(name, func(t *testing.T) {
			ch := &countingHandler{h: h}
			srv := serve(t, ch.ServeHTTP)
			c, _ := newClient(t, srv.URL+"/model/allocation", nil)
			err := c.FetchDay(context.Background(), testDay, &memSink{})
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, want := range []string{"kubecost: get 2026-11-01T00:00:00Z,2026-11-02T00:00:00Z", srv.URL + "/model/allocation", "html", "KUBECOST_API_ENDPOINT", "9090"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q:\n%s", want, msg)
				}
			}
			if strings.ContainsAny(msg, "\x00\x1b\n") {
				t.Errorf("error is not sanitized: %q", msg)
			}
			if ch.count() != 1 {
				t.Errorf("%d requests: HTML must not be retried", ch.count())
			}
		})
	}
}

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
	c, logs := newClient(t, srv.URL+"/model/allocation", func(o *Options) { o.Retries = 1 })
	var got memSink
	st, err := c.FetchDayStats(context.Background(), testDay, &got)
	if err != nil {
		t.Fatal(err)
	}
	// 24 → 12+12 → 6+6+6+6 → 3+3 ×4.
	if st.Splits != 7 || got.resets != 0 {
		t.Errorf("stats %+v, resets %d", st, got.resets)
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

func TestNoData(t *testing.T) {
	srv := newSim(t, simConfig())
	srv.Sim.SetFaults(kubecostsim.Faults{Mode: kubecostsim.FaultNullData})
	c, _ := newClient(t, srv.URL+"/model/allocation", nil)
	err := c.FetchDay(context.Background(), testDay, &memSink{})
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "2026-11-01") {
		t.Errorf("FetchDay: %v, want ErrNoData naming the day", err)
	}
	days, err := c.AvailableDays(context.Background(), testDay.Add(-72*time.Hour), testDay.Add(24*time.Hour))
	if err != nil || len(days) != 0 {
		t.Errorf("AvailableDays = %v, %v; want none", days, err)
	}
}

func TestErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int
		body     string
		requests int
		want     string
	}{
		{"kubecost message", 500, `{"code":500,"message":"error computing allocation: boom"}`, 3, "HTTP 500 Internal Server Error: error computing allocation: boom"},
		{"error field", 400, `{"error":"invalid aggregate: foo"}`, 1, "HTTP 400 Bad Request: invalid aggregate: foo"},
		{"plain 404", 404, "404 page not found\n", 1, "KUBECOST_API_FLAVOR"},
		{"unauthorized", 401, "", 1, "bearer token"},
		{"code in 200 body", 200, `{"code":503,"message":"warming up"}`, 3, "response code 503: warming up"},
		{"code 400 in 200 body", 200, `{"code":400,"message":"bad window"}`, 1, "response code 400: bad window"},
		{"empty 200", 200, "", 3, "empty body"},
		{"408", 408, "", 3, "408"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := &countingHandler{h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}}
			srv := serve(t, ch.ServeHTTP)
			c, _ := newClient(t, srv.URL, func(o *Options) { o.Retries = 2; o.Step = 24 * time.Hour })
			err := c.FetchDay(context.Background(), testDay, &memSink{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if ch.count() != tc.requests {
				t.Errorf("%d requests, want %d", ch.count(), tc.requests)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := serve(t, echoHandler)
	u := srv.URL
	srv.Close()
	c, logs := newClient(t, u, func(o *Options) { o.Retries = 2; o.BearerToken = "tok-123" })
	_, err := c.FetchDayStats(context.Background(), testDay, &memSink{})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v", err)
	}
	if strings.Count(logs.String(), "retrying") != 2 || strings.Contains(logs.String(), "tok-123") {
		t.Errorf("logs:\n%s", logs)
	}
}

func TestTLS(t *testing.T) {
	caPEM, cert, err := kubecostsim.GenerateCert()
	if err != nil {
		t.Fatal(err)
	}
	srv := kubecostsim.NewTLSServer(simConfig(), tlsConfigWith(cert))
	t.Cleanup(srv.Close)

	c, _ := newClient(t, srv.URL+"/model/allocation", nil)
	err = c.FetchDay(context.Background(), testDay, &memSink{})
	if err == nil || !strings.Contains(err.Error(), "KUBECOST_CA_CERTIFICATE_SECRET_NAME") {
		t.Fatalf("untrusted certificate: err = %v", err)
	}
	if n := len(srv.Sim.Requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}

	c, _ = newClient(t, srv.URL+"/model/allocation", func(o *Options) { o.TLS = rootsConfig(t, caPEM) })
	var sink memSink
	if err := c.FetchDay(context.Background(), testDay, &sink); err != nil {
		t.Fatal(err)
	}
	checkTruth(t, srv.Sim, time.Hour, &sink)
}

func TestAvailableDays(t *testing.T) {
	cfg := simConfig()
	cfg.RetentionDays = 4
	cfg.Quirks.OffsetTimes = true
	srv := newSim(t, cfg)
	srv.Sim.SetFaults(kubecostsim.Faults{Mode: kubecostsim.FaultStatus, Status: 502, Times: 1})
	c, _ := newClient(t, srv.URL+"/model/allocation", nil)
	from, to := testDay.Add(-5*24*time.Hour), testDay.Add(3*24*time.Hour)
	days, err := c.AvailableDays(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	var want []time.Time
	for _, d := range srv.Sim.AvailableDays() {
		if !d.Before(from) && d.Before(to) {
			want = append(want, d)
		}
	}
	if len(want) == 0 || !slices.Equal(days, want) {
		t.Errorf("days %v, want %v", days, want)
	}
	reqs := srv.Sim.Requests()
	q := reqs[len(reqs)-1].Query
	wantQ := url.Values{"window": {"2026-10-27T00:00:00Z,2026-11-04T00:00:00Z"}, "aggregate": {"cluster"}, "step": {"1d"}, "accumulate": {"false"}}
	if len(reqs) != 2 || q.Encode() != wantQ.Encode() {
		t.Errorf("%d requests, last %s, want %s", len(reqs), q.Encode(), wantQ.Encode())
	}
}

func TestConcurrentDays(t *testing.T) {
	srv := newSim(t, simConfig())
	c, _ := newClient(t, srv.URL+"/model/allocation", nil)
	var wg sync.WaitGroup
	sinks := make([]memSink, 4)
	for i := range sinks {
		wg.Go(func() {
			if err := c.FetchDay(context.Background(), testDay.Add(-time.Duration(i)*24*time.Hour), &sinks[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range sinks {
		day := testDay.Add(-time.Duration(i) * 24 * time.Hour).UnixMilli()
		for _, r := range sinks[i].rows {
			if r.Start < day || r.End > day+24*3600*1000 || r.Props[schema.PropClusterID] == "" {
				t.Fatalf("day %d got row %+v", i, r)
			}
		}
	}
	if st := c.Stats(); st.Requests != 4 || st.Allocations == 0 {
		t.Errorf("stats %+v", st)
	}
}
