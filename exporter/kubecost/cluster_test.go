package kubecost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// fleetHandler is a two-cluster primary: cluster "a" has data on every
// day, "b" on every day but testDay; each row costs its cluster's index
// + 1. With honour set it applies filter=cluster:"<id>" and
// filterClusters=<id>, else it ignores both. It records each query.
type fleetHandler struct {
	honour  bool
	mu      sync.Mutex
	queries []url.Values
}

func (h *fleetHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	h.mu.Lock()
	h.queries = append(h.queries, q)
	h.mu.Unlock()
	want := ""
	if h.honour {
		if f := q.Get("filter"); f != "" {
			want = strings.TrimSuffix(strings.TrimPrefix(f, `cluster:"`), `"`)
		} else {
			want = q.Get("filterClusters")
		}
	}
	start, end, _ := strings.Cut(q.Get("window"), ",")
	s, _ := time.Parse(time.RFC3339, start)
	e, _ := time.Parse(time.RFC3339, end)
	io.WriteString(w, `{"code":200,"data":[`)
	for t := s; t.Before(e); t = t.Add(24 * time.Hour) {
		if t != s {
			io.WriteString(w, ",")
		}
		io.WriteString(w, "{")
		n := 0
		for i, id := range []string{"a", "b"} {
			if (want != "" && id != want) || (id == "b" && t.Equal(testDay)) {
				continue
			}
			if n > 0 {
				io.WriteString(w, ",")
			}
			n++
			name := id
			if q.Get("aggregate") != "cluster" {
				name = id + "/n/ns/pod/ctr"
			}
			fmt.Fprintf(w, `%q:{"name":%q,"properties":{"cluster":%q,"node":"n","namespace":"ns","pod":"pod","container":"ctr"},"window":{"start":%q,"end":%q},"totalCost":%d}`,
				name, name, id, t.Format(time.RFC3339), t.Add(24*time.Hour).Format(time.RFC3339), i+1)
		}
		io.WriteString(w, "}")
	}
	io.WriteString(w, `]}`)
}

func TestClusterDays(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&fleetHandler{})
	t.Cleanup(srv.Close)
	c, _ := newClient(t, srv.URL, func(o *Options) { o.Step = 24 * time.Hour })
	from := testDay.Add(-24 * time.Hour)
	got, err := c.ClusterDays(context.Background(), from, testDay.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	days := func(id string) (out []string) {
		for _, d := range got[id] {
			out = append(out, fmt.Sprintf("%s=%g", d.Day.Format(time.DateOnly), d.TotalCost))
		}
		return out
	}
	if a := days("a"); !slices.Equal(a, []string{"2026-10-31=1", "2026-11-01=1", "2026-11-02=1"}) {
		t.Errorf("a: %v", a)
	}
	if b := days("b"); !slices.Equal(b, []string{"2026-10-31=2", "2026-11-02=2"}) {
		t.Errorf("b: %v", b)
	}
	// The single-cluster view sums the clusters of a day.
	all, err := c.AvailableDays(context.Background(), from, testDay.Add(48*time.Hour))
	if err != nil || len(all) != 3 || all[0].TotalCost != 3 || all[1].TotalCost != 1 {
		t.Errorf("AvailableDays = %v, %v", all, err)
	}
}

func TestClusterSourceFilter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flavor      Flavor
		filter      ClusterFilter
		key, value  string
		honour, bad bool
	}{
		{FlavorKubecost, "", "filter", `cluster:"b"`, true, false},
		{FlavorCostModel, FilterV1, "filterClusters", "b", true, false},
		{FlavorOpenCost, FilterV2, "filter", `cluster:"b"`, true, false},
		{FlavorKubecost, FilterV2, "filter", `cluster:"b"`, false, true},
	} {
		t.Run(fmt.Sprintf("%s-%s-honour=%v", tc.flavor, tc.filter, tc.honour), func(t *testing.T) {
			t.Parallel()
			h := &fleetHandler{honour: tc.honour}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			c, _ := newClient(t, srv.URL, func(o *Options) {
				o.Step, o.Flavor, o.ClusterFilter = 24*time.Hour, tc.flavor, tc.filter
			})
			proj := schema.NewProjection("arn:aws:eks:eu-west-1:444455556666:cluster/bee", "bee", nil, nil)
			src := c.ForCluster("b", proj)
			sink := &memSink{}
			err := src.FetchDay(context.Background(), testDay.Add(24*time.Hour), sink)
			if tc.bad {
				if !errors.Is(err, ErrFilterIgnored) || !strings.Contains(err.Error(), `a row of cluster "a" in the response for cluster "b"`) {
					t.Fatalf("err = %v, want ErrFilterIgnored naming both clusters", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if q := h.queries[0]; q.Get(tc.key) != tc.value {
				t.Errorf("query %s, want %s=%s", q.Encode(), tc.key, tc.value)
			}
			if tc.bad {
				return
			}
			if len(sink.rows) != 1 {
				t.Fatalf("%d rows, want 1", len(sink.rows))
			}
			r := sink.rows[0]
			if r.Props[schema.PropCluster] != "b" || r.Props[schema.PropEKSClusterName] != "bee" ||
				r.Props[schema.PropClusterID] != "arn:aws:eks:eu-west-1:444455556666:cluster/bee" {
				t.Errorf("row props %q", r.Props)
			}
		})
	}
}

func TestClusterFilterOpenCostV1(t *testing.T) {
	t.Parallel()
	_, err := New(Options{URL: "http://x/allocation/compute", Aggregate: "cluster", Step: 24 * time.Hour,
		Projection: testProjection(), Flavor: FlavorOpenCost, ClusterFilter: FilterV1})
	if err == nil || !strings.Contains(err.Error(), "OpenCost does not read filterClusters (v1)") {
		t.Fatalf("err = %v", err)
	}
}
