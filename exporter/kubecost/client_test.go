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

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
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
		fmt.Fprintf(w, `{"c/n/ns/pod/ctr":{"name":"c/n/ns/pod/ctr","properties":{"cluster":"c","node":"n","namespace":"ns","pod":"pod","container":"ctr"},"window":{"start":%q,"end":%q},"totalCost":1}}`,
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
	var want, got []time.Time
	for _, d := range srv.Sim.AvailableDays() {
		if !d.Before(from) && d.Before(to) {
			want = append(want, d)
		}
	}
	for _, d := range days {
		got = append(got, d.Day)
		// The day's total is the sum of the cluster-level totalCost of the
		// query the client sends, idle split by cluster and included,
		// rounded to a millionth (exporter.RoundTotal).
		trs, err := srv.Sim.TruthFor(url.Values{"window": {d.Day.Format(time.RFC3339) + "," + d.Day.Add(24*time.Hour).Format(time.RFC3339)},
			"aggregate": {"cluster"}, "step": {"1d"}, "accumulate": {"false"}, "idle": {"true"}, "splitIdle": {"true"}})
		if err != nil || len(trs) != 1 || trs[0].TotalCost <= 0 || math.Abs(d.TotalCost-trs[0].TotalCost) > 5e-7 {
			t.Errorf("%s: total %v, truth %+v (%v)", d.Day.Format(time.DateOnly), d.TotalCost, trs, err)
		}
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("days %v, want %v", got, want)
	}
	reqs := srv.Sim.Requests()
	q := reqs[len(reqs)-1].Query
	wantQ := url.Values{"window": {"2026-10-27T00:00:00Z,2026-11-04T00:00:00Z"}, "aggregate": {"cluster"}, "step": {"1d"}, "accumulate": {"false"},
		"idle": {"true"}, "splitIdle": {"true"}}
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

// TestDayQuery: what the config fingerprint hashes is the day query without
// its window, and it follows the options that change the rows.
func TestDayQuery(t *testing.T) {
	c, _ := newClient(t, "http://kubecost.example/model/allocation?team=a", nil)
	q, err := url.ParseQuery(c.DayQuery())
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{"aggregate": {containerAggregate}, "step": {"1h"}, "accumulate": {"false"}, "idle": {"true"},
		"splitIdle": {"true"}, "idleByNode": {"true"}, "shareTenancyCosts": {"true"}, "team": {"a"}}
	if q.Encode() != want.Encode() {
		t.Errorf("DayQuery = %s, want %s", q.Encode(), want.Encode())
	}
	daily, _ := newClient(t, "http://kubecost.example/model/allocation?team=a", func(o *Options) { o.Step = 24 * time.Hour })
	pod, _ := newClient(t, "http://kubecost.example/model/allocation?team=a", func(o *Options) { o.Aggregate = "namespace,pod" })
	if daily.DayQuery() == c.DayQuery() || pod.DayQuery() == c.DayQuery() {
		t.Errorf("DayQuery ignores step or aggregate: %s, %s", daily.DayQuery(), pod.DayQuery())
	}
}
