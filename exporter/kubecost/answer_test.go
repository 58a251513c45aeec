package kubecost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// arow is one allocation of a canned answer; props is its properties
// object, start its window (end = start + step).
type arow struct {
	name, props string
	start       time.Time
	step        time.Duration
	cost        float64
}

const fullProps = `{"cluster":"c","node":"n","namespace":"ns","pod":"p","container":"ctr"}`

// container is a right row of a container-level daily query.
func container(i int, day time.Time) arow {
	return arow{name: fmt.Sprintf("c/n/ns/p/ctr%d", i), props: strings.Replace(fullProps, `"ctr"`, fmt.Sprintf(`"ctr%d"`, i), 1), start: day, step: 24 * time.Hour, cost: 1}
}

// clusterRow is the row of cluster c of an aggregate=cluster answer: what
// kubecost/kubecost#4508 returns to a container-level query.
func clusterRow(day time.Time) arow {
	return arow{name: "c", props: `{"cluster":"c"}`, start: day, step: 24 * time.Hour, cost: 10}
}

// answers serves answer(n) to the n-th query (from 0), one set per call.
func answers(answer func(n int) []arow) http.HandlerFunc {
	var n atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		rows := answer(int(n.Add(1) - 1))
		io.WriteString(w, `{"code":200,"data":[{`)
		for i, a := range rows {
			if i > 0 {
				io.WriteString(w, ",")
			}
			fmt.Fprintf(w, `%q:{"name":%q,"properties":%s,"window":{"start":%q,"end":%q},"totalCost":%v}`, a.name, a.name, a.props,
				a.start.Format(time.RFC3339), a.start.Add(a.step).Format(time.RFC3339), a.cost)
		}
		io.WriteString(w, `}]}`)
	}
}

// checkedSink fails the test when a row without a container reaches it:
// the answer check must stop a wrong row before the sink, not after.
type checkedSink struct {
	memSink
	t *testing.T
}

func (s *checkedSink) Write(r *schema.Record) error {
	if r.Props[schema.PropContainer] == "" && !isServerNamed(r.Name) {
		s.t.Errorf("row %q of a wrong answer reached the sink", r.Name)
	}
	return s.memSink.Write(r)
}

// Two stale answers (the cluster aggregation, then a right first row and
// a stale one) are retried; the third answer is right and is all the sink
// keeps. With fewer retries than stale answers the day fails, naming the
// cause, and nothing reaches the sink.
func TestStaleAnswerRetried(t *testing.T) {
	t.Parallel()
	answer := func(n int) []arow {
		switch n {
		case 0:
			return []arow{clusterRow(testDay), {name: "c/__idle__", props: `{"cluster":"c"}`, start: testDay, step: 24 * time.Hour, cost: 1}}
		case 1:
			return []arow{container(1, testDay), clusterRow(testDay)} // stale after a right-looking row
		}
		return []arow{container(1, testDay), container(2, testDay)}
	}
	srv := serve(t, answers(answer))
	c, logs := newClient(t, srv.URL, func(o *Options) { o.Step = 24 * time.Hour })
	sink := &checkedSink{t: t}
	if err := c.FetchDay(context.Background(), testDay, sink); err != nil {
		t.Fatal(err)
	}
	if got := sink.names(); len(got) != 2 || !strings.HasPrefix(got[0], "c/n/ns/p/ctr1@") {
		t.Errorf("sink holds %v, want the two rows of the right answer", got)
	}
	if st := c.Stats(); st.Retries != 2 || st.Splits != 0 {
		t.Errorf("stats %+v, want 2 retries and no split", st)
	}
	if !strings.Contains(logs.String(), "answered another query") {
		t.Errorf("the retries do not say why:\n%s", logs)
	}

	srv = serve(t, answers(answer))
	c, _ = newClient(t, srv.URL, func(o *Options) { o.Step = 24 * time.Hour; o.Retries = 1 })
	sink = &checkedSink{t: t}
	err := c.FetchDay(context.Background(), testDay, sink)
	if !errors.Is(err, ErrOtherAnswer) || errors.Is(err, exporter.ErrServerUnsupported) ||
		!strings.Contains(err.Error(), "Kubecost answered another query than the one asked") || !strings.Contains(err.Error(), "has no node") {
		t.Fatalf("err = %v, want ErrOtherAnswer naming the server and the missing property", err)
	}
	// The right row before the stale one may be in the sink (checkedSink
	// saw no wrong one): a failed day's file is discarded unread.
	if len(sink.rows) > 1 {
		t.Errorf("a failed day left %d rows in the sink", len(sink.rows))
	}
}

// Each row's window must be one set of the window asked: another day, an
// hourly set in a daily query, or a set beyond the window is another
// query's answer. Hourly sets of an hourly query are right.
func TestAnswerWindowChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		step  time.Duration // of the query
		rows  []arow
		wrong bool
	}{
		{"the day asked", 24 * time.Hour, []arow{container(1, testDay)}, false},
		{"the day before", 24 * time.Hour, []arow{container(1, testDay.Add(-24*time.Hour))}, true},
		{"an hour of a daily query", 24 * time.Hour, []arow{{name: "c/n/ns/p/ctr", props: fullProps, start: testDay, step: time.Hour}}, true},
		{"hours of an hourly query", time.Hour, []arow{{name: "c/n/ns/p/ctr", props: fullProps, start: testDay, step: time.Hour},
			{name: "c/n/ns/p/ctr", props: fullProps, start: testDay.Add(23 * time.Hour), step: time.Hour}}, false},
		{"an hour off the grid", time.Hour, []arow{{name: "c/n/ns/p/ctr", props: fullProps, start: testDay.Add(30 * time.Minute), step: time.Hour}}, true},
		{"a day of an hourly query", time.Hour, []arow{container(1, testDay)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, answers(func(int) []arow { return tc.rows }))
			c, _ := newClient(t, srv.URL, func(o *Options) { o.Step = tc.step; o.Retries = 0 })
			err := c.FetchDay(context.Background(), testDay, &memSink{})
			if got := errors.Is(err, ErrOtherAnswer); got != tc.wrong {
				t.Fatalf("err = %v, want other answer: %v", err, tc.wrong)
			}
			if tc.wrong && !strings.Contains(err.Error(), "is not a 1") {
				t.Errorf("err = %v, want it to name the window", err)
			}
		})
	}
}

// The rows the core names itself carry no aggregated property of their
// own and pass; so does a row whose controller is empty, as the check
// reads only cluster, node, namespace, pod and container.
func TestServerNamedRowsPass(t *testing.T) {
	t.Parallel()
	d := 24 * time.Hour
	rows := []arow{
		container(1, testDay),
		{name: "__idle__", props: `{}`, start: testDay, step: d},
		{name: "c/__idle__", props: `{"cluster":"c"}`, start: testDay, step: d},
		{name: "c/n/__idle__", props: `{"cluster":"c","node":"n","providerID":"i-1"}`, start: testDay, step: d},
		// An unmounted volume has no node (costmodel's getUnmountedPodForCluster).
		{name: "c//__unmounted__/__unmounted__/__unmounted__", props: `{"cluster":"c","namespace":"__unmounted__","pod":"__unmounted__","container":"__unmounted__"}`, start: testDay, step: d},
		{name: "c//ns/ns-unmounted-pvcs/__unmounted__", props: `{"cluster":"c","namespace":"ns","pod":"ns-unmounted-pvcs","container":"__unmounted__"}`, start: testDay, step: d},
		{name: "__unallocated__", props: `{"cluster":"c"}`, start: testDay, step: d},
		{name: "x/__shared__", props: `{"cluster":"__shared__"}`, start: testDay, step: d},
		{name: "c/__external__", props: `{"cluster":"c"}`, start: testDay, step: d},
	}
	srv := serve(t, answers(func(int) []arow { return rows }))
	c, _ := newClient(t, srv.URL, func(o *Options) { o.Step = d; o.Retries = 0 })
	var sink memSink
	if err := c.FetchDay(context.Background(), testDay, &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.rows) != len(rows) {
		t.Errorf("%d rows, want %d", len(sink.rows), len(rows))
	}
}

// The availability answer must be aggregated by cluster: a container-level
// answer (two rows of one cluster in one day) is retried, and the days and
// totals come from the right answer. Its day total prints without float
// noise: 50.2 + 28.09131 sums to 78.29131000000001.
func TestAvailabilityAnswerChecked(t *testing.T) {
	t.Parallel()
	srv := serve(t, answers(func(n int) []arow {
		if n == 0 {
			return []arow{container(1, testDay), container(2, testDay)}
		}
		return []arow{{name: "c", props: `{"cluster":"c"}`, start: testDay, step: 24 * time.Hour, cost: 50.2},
			{name: "c/__idle__", props: `{"cluster":"c"}`, start: testDay, step: 24 * time.Hour, cost: 28.09131}}
	}))
	c, logs := newClient(t, srv.URL, nil)
	days, err := c.AvailableDays(context.Background(), testDay, testDay.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 1 || days[0].TotalCost != 78.29131 || exporter.FormatTotal(days[0].TotalCost) != "78.29131" {
		t.Fatalf("days %+v, want one day of 78.29131", days)
	}
	if !strings.Contains(logs.String(), "not aggregated by cluster") {
		t.Errorf("the retry does not say why:\n%s", logs)
	}

	srv = serve(t, answers(func(int) []arow { return []arow{container(1, testDay)} }))
	c, _ = newClient(t, srv.URL, func(o *Options) { o.Retries = 0 })
	if _, err := c.AvailableDays(context.Background(), testDay, testDay.Add(24*time.Hour)); !errors.Is(err, ErrOtherAnswer) {
		t.Errorf("one container row per cluster: err = %v; a name of the container aggregation is not a cluster", err)
	}
}

// A server that ignores the cluster filter answers a cluster-day with
// other clusters' rows: retried (a Kubecost 3.x filter may "stick",
// #4508), then an error that names the configured server and what it
// takes, and that stops the run (exporter.ErrServerUnsupported).
func TestFilterIgnoredNamesServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flavor Flavor
		want   []string
	}{
		{FlavorOpenCost, []string{"OpenCost ignored the cluster filter", "OpenCost reads filter on /allocation/compute from 1.115", "opencost/opencost#3155"}},
		{FlavorKubecost, []string{"Kubecost ignored the cluster filter", "from 1.96", "KUBECOST_CLUSTER_FILTER=v1"}},
		{FlavorCostModel, []string{"Kubecost's cost-model ignored the cluster filter"}},
	} {
		t.Run(string(tc.flavor), func(t *testing.T) {
			t.Parallel()
			h := &fleetHandler{}
			srv := serve(t, h.ServeHTTP)
			c, _ := newClient(t, srv.URL, func(o *Options) { o.Step, o.Flavor, o.Retries = 24*time.Hour, tc.flavor, 1 })
			err := c.ForCluster("b", testProjection()).FetchDay(context.Background(), testDay.Add(24*time.Hour), &memSink{})
			if !errors.Is(err, ErrFilterIgnored) || !errors.Is(err, ErrOtherAnswer) || !errors.Is(err, exporter.ErrServerUnsupported) {
				t.Fatalf("err = %v, want ErrFilterIgnored, ErrOtherAnswer and ErrServerUnsupported", err)
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("err = %v\nwant it to say %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "retried by the next run") || (tc.flavor == FlavorOpenCost && strings.Contains(err.Error(), "Kubecost")) {
				t.Errorf("err = %v names the wrong server or promises a retry", err)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.queries) != 2 {
				t.Errorf("%d queries, want 2 (one retry)", len(h.queries))
			}
		})
	}
}
