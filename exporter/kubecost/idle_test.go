package kubecost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// row is one allocation of a canned response.
type row struct {
	name, cluster string
	cost          float64
}

// rowsHandler answers every query with one daily set holding rows.
func rowsHandler(rows ...row) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start, end, _ := strings.Cut(r.URL.Query().Get("window"), ",")
		io.WriteString(w, `{"code":200,"data":[{`)
		for i, a := range rows {
			if i > 0 {
				io.WriteString(w, ",")
			}
			props := `{}`
			if a.cluster != "" {
				props = fmt.Sprintf(`{"cluster":%q,"node":"n","namespace":"ns","pod":"p","container":"c"}`, a.cluster)
			}
			fmt.Fprintf(w, `%q:{"name":%q,"properties":%s,"window":{"start":%q,"end":%q},"totalCost":%g}`,
				a.name, a.name, props, start, end, a.cost)
		}
		io.WriteString(w, `}]}`)
	}
}

// idleCounter is an Observer that counts days without idle.
type idleCounter struct{ n atomic.Int64 }

func (c *idleCounter) ObserveRequest(Outcome) {}
func (c *idleCounter) ObserveDayWithoutIdle() { c.n.Add(1) }

// A filtered response from the core carries the idle rows of every other
// cluster (cost 0 for nodes that ran something, full for nodes that ran
// nothing): they are dropped, the requested cluster's own idle is kept,
// and the drop is logged once at debug level with its count and cost.
func TestClusterSourceDropsOtherClustersIdle(t *testing.T) {
	t.Parallel()
	srv := serve(t, rowsHandler(
		row{"b/ns/pod/c", "b", 3},
		row{"b/node-1/__idle__", "b", 2},
		row{"a/node-9/__idle__", "a", 0},   // busy node of a: coefficient 0
		row{"a/node-7/__idle__", "a", 5.5}, // empty node of a: full idle
		row{"c/__idle__", "c", 1},          // cluster-level idle of c
	))
	obs := &idleCounter{}
	c, logs := newClient(t, srv.URL, func(o *Options) { o.Step, o.Observer = 24*time.Hour, obs })
	sink := &memSink{}
	if err := c.ForCluster("b", testProjection()).FetchDay(context.Background(), testDay, sink); err != nil {
		t.Fatal(err)
	}
	if got := rowNames(sink); !slices.Equal(got, []string{"b/ns/pod/c", "b/node-1/__idle__"}) {
		t.Errorf("rows %v, want b's allocation and its own idle", got)
	}
	if total := sink.rows[0].Num[totalCost] + sink.rows[1].Num[totalCost]; total != 5 {
		t.Errorf("total %v, want 5", total)
	}
	l := logs.String()
	if strings.Count(l, "dropped the idle rows of other clusters") != 1 || !strings.Contains(l, "rows=3") || !strings.Contains(l, "total_cost=6.5") {
		t.Errorf("want one debug line with rows=3 total_cost=6.5:\n%s", l)
	}
	if obs.n.Load() != 0 || strings.Contains(l, "no idle row") {
		t.Errorf("a day with its own idle counted as a day without idle")
	}
}

// Any non-idle row of another cluster still fails the cluster-day, and so
// does a row that only looks idle under another cluster's name.
func TestClusterSourceForeignRowStillFails(t *testing.T) {
	t.Parallel()
	for _, foreign := range []row{{"a/ns/pod/c", "a", 1}, {"b/node/__idle__", "a", 1}, {"a/node/__idle__x", "a", 1}} {
		srv := serve(t, rowsHandler(row{"b/ns/pod/c", "b", 3}, foreign))
		c, _ := newClient(t, srv.URL, func(o *Options) { o.Step = 24 * time.Hour })
		err := c.ForCluster("b", testProjection()).FetchDay(context.Background(), testDay, &memSink{})
		if !errors.Is(err, ErrFilterIgnored) {
			t.Errorf("%v: err = %v, want ErrFilterIgnored", foreign, err)
		}
	}
}

// An idle row merged across clusters (no splitIdle: OpenCost) has no
// cluster; it is kept with the cluster's day and said once per run.
func TestClusterSourceKeepsMergedIdle(t *testing.T) {
	t.Parallel()
	srv := serve(t, rowsHandler(row{"b/ns/pod/c", "b", 3}, row{"__idle__", "", 4}))
	c, logs := newClient(t, srv.URL, func(o *Options) { o.Step, o.Flavor = 24*time.Hour, FlavorOpenCost })
	src := c.ForCluster("b", testProjection())
	for range 2 {
		sink := &memSink{}
		if err := src.FetchDay(context.Background(), testDay, sink); err != nil {
			t.Fatal(err)
		}
		if got := rowNames(sink); !slices.Equal(got, []string{"b/ns/pod/c", "__idle__"}) {
			t.Errorf("rows %v", got)
		}
	}
	if n := strings.Count(logs.String(), "merged the idle cost of several clusters"); n != 1 {
		t.Errorf("%d warnings about merged idle, want 1", n)
	}
}

// A day with allocations but no idle row, though idle was asked for, is
// warned about once per run and counted for every such day.
func TestDayWithoutIdle(t *testing.T) {
	t.Parallel()
	srv := serve(t, rowsHandler(row{"b/ns/pod/c", "b", 3}, row{"a/node/__idle__", "a", 9}))
	obs := &idleCounter{}
	c, logs := newClient(t, srv.URL, func(o *Options) { o.Step, o.Observer = 24*time.Hour, obs })
	for _, d := range []time.Time{testDay, testDay.Add(24 * time.Hour)} {
		// Only a's idle came back: b's day has none of its own.
		if err := c.ForCluster("b", testProjection()).FetchDay(context.Background(), d, &memSink{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.FetchDay(context.Background(), testDay, &memSink{}); err != nil {
		t.Fatal(err) // single-cluster: a's idle row is an idle row
	}
	if n := obs.n.Load(); n != 2 {
		t.Errorf("%d days without idle counted, want 2", n)
	}
	if n := strings.Count(logs.String(), "no idle row"); n != 1 {
		t.Errorf("%d warnings, want 1 per run", n)
	}
}

// The availability query asks for idle split by cluster, so each
// cluster's day total includes its idle; an idle row merged across
// clusters (a server that cannot split it) is never a cluster.
func TestClusterDaysIdle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flavor Flavor
		want   string
	}{
		{FlavorKubecost, "idle=true&splitIdle=true"},
		{FlavorCostModel, "idle=true&splitIdle=true"},
		{FlavorOpenCost, "includeIdle=true"},
	} {
		var query string
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			query = r.URL.RawQuery
			rowsHandler(row{"a", "a", 1}, row{"a/__idle__", "a", 0.5}, row{"b", "b", 2}, row{"__idle__", "", 7})(w, r)
		})
		c, _ := newClient(t, srv.URL, func(o *Options) { o.Step, o.Flavor = 24*time.Hour, tc.flavor })
		got, err := c.ClusterDays(context.Background(), testDay, testDay.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || len(got["a"]) != 1 || got["a"][0].TotalCost != 1.5 || got["b"][0].TotalCost != 2 {
			t.Errorf("%s: ClusterDays %v, want a=1.5 (idle included), b=2 and no cluster for the merged idle", tc.flavor, got)
		}
		for _, p := range strings.Split(tc.want, "&") {
			if !strings.Contains(query, p) {
				t.Errorf("%s: availability query %s lacks %s", tc.flavor, query, p)
			}
		}
		all, err := c.AvailableDays(context.Background(), testDay, testDay.Add(24*time.Hour))
		if err != nil || len(all) != 1 || all[0].TotalCost != 10.5 {
			t.Errorf("%s: AvailableDays %v, %v: want the whole day, merged idle included (10.5)", tc.flavor, all, err)
		}
	}
}

func TestIsIdle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, cluster string
		want          bool
	}{
		{"__idle__", "", true}, {"__idle__", "a", true}, {"a/__idle__", "a", true}, {"a/n-1/__idle__", "a", true},
		{"b/n-1/__idle__", "a", false}, {"a/__idle__x", "a", false}, {"/__idle__", "", false}, {"a/ns/__idle__/c", "a", false},
	} {
		if got := isIdle(tc.name, tc.cluster); got != tc.want {
			t.Errorf("isIdle(%q, %q) = %v", tc.name, tc.cluster, got)
		}
	}
}

// rowNames lists the names of the rows sink received, in order.
func rowNames(s *memSink) []string {
	var out []string
	for _, r := range s.rows {
		out = append(out, r.Name)
	}
	return out
}
