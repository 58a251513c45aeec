package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// fleetStore counts List calls per prefix and can deny writes under one
// prefix, as a bucket policy denying one cluster's prefix does.
type fleetStore struct {
	*memStore
	mu         sync.Mutex
	lists      map[string]int
	denied     string // Put under this prefix fails
	listDenied string // List of this prefix fails
}

func (s *fleetStore) List(ctx context.Context, prefix, startAfter string, fn func(exporter.ObjectInfo) error) error {
	s.mu.Lock()
	s.lists[prefix]++
	denied := s.listDenied != "" && prefix == s.listDenied
	s.mu.Unlock()
	if denied {
		return errors.New("AccessDenied")
	}
	return s.memStore.List(ctx, prefix, startAfter, fn)
}

func (s *fleetStore) Put(ctx context.Context, key string, r io.Reader, meta map[string]string, cond exporter.Precondition) error {
	s.mu.Lock()
	denied := s.denied != "" && strings.HasPrefix(key, s.denied)
	s.mu.Unlock()
	if denied {
		return errors.New("AccessDenied")
	}
	return s.memStore.Put(ctx, key, r, meta, cond)
}

func fleetMember(id, account, region, name string, src exporter.AllocationSource) app.Cluster {
	arn := "arn:aws:eks:" + region + ":" + account + ":cluster/" + name
	return app.Cluster{
		ID: id, ARN: arn, Source: src,
		Layout:      exporter.Layout{Account: account, Region: region, Cluster: name},
		Projection:  schema.NewProjection(arn, name, nil, nil),
		NewEncoder:  lineEncoders(0),
		Fingerprint: testFingerprint,
		Metadata:    map[string]string{"cluster": arn},
	}
}

func TestRunClusters(t *testing.T) {
	t.Parallel()
	days := windowDays(t)
	// Three mapped clusters, two sharing account and region; "ghost" is
	// unmapped. "b" has no data on days[1].
	srcs := map[string]*memSource{}
	byCluster := map[string][]exporter.DayTotal{}
	for _, id := range []string{"a", "b", "c", "ghost"} {
		s := &memSource{days: map[time.Time]fetchFunc{}}
		for i, d := range days {
			if id == "b" && i == 1 {
				continue
			}
			s.days[d] = rows(id+d.Format(time.DateOnly), 2)
			byCluster[id] = append(byCluster[id], exporter.DayTotal{Day: d})
		}
		srcs[id] = s
	}
	store := &fleetStore{memStore: newMemStore(), lists: map[string]int{}, denied: "account_id=444455556666/region=eu-west-1/"}
	var asked int
	fo := options(nil, store)
	fo.Available = func(ctx context.Context, from, to time.Time) (map[string][]exporter.DayTotal, error) {
		asked++
		return byCluster, nil
	}
	fo.Clusters = []app.Cluster{
		fleetMember("a", "111122223333", "us-east-1", "alpha", srcs["a"]),
		fleetMember("b", "111122223333", "us-east-1", "beta", srcs["b"]),
		fleetMember("c", "444455556666", "eu-west-1", "gamma", srcs["c"]),
	}
	fo.Concurrency = 3
	sum, err := app.Run(context.Background(), fo)
	if !errors.Is(err, app.ErrDaysFailed) || errors.Is(err, app.ErrUnmappedClusters) {
		t.Fatalf("err = %v, want ErrDaysFailed only", err)
	}
	if asked != 1 || !slices.Equal(sum.Unmapped, []string{"ghost"}) {
		t.Errorf("availability asked %d times, unmapped %v", asked, sum.Unmapped)
	}
	// One listing per account/region prefix, not per cluster.
	if len(store.lists) != 2 || store.lists["account_id=111122223333/region=us-east-1/"] != 1 {
		t.Errorf("lists %v", store.lists)
	}
	// a and b landed under their own keys; c failed alone, every day.
	for _, tc := range []struct {
		id      string
		layout  exporter.Layout
		skip    int
		written int
	}{
		{"a", fo.Clusters[0].Layout, -1, len(days)},
		{"b", fo.Clusters[1].Layout, 1, len(days) - 1},
	} {
		for i, d := range days {
			o, ok := store.object(tc.layout.Key(d, exporter.Snappy))
			if ok != (i != tc.skip) {
				t.Errorf("%s %s stored %v", tc.id, d.Format(time.DateOnly), ok)
				continue
			}
			if ok && !slices.Equal(names(o), wantNames(tc.id+d.Format(time.DateOnly), 2)) {
				t.Errorf("%s %s holds %v", tc.id, d.Format(time.DateOnly), names(o))
			}
		}
	}
	failed := sum.Failed()
	if len(failed) != len(days) || failed[0].Cluster != "c" {
		t.Errorf("failed cluster-days %v, want every day of c", failed)
	}
	if d, _, _ := sum.Written(); d != 2*len(days)-1 {
		t.Errorf("written %d cluster-days, want %d", d, 2*len(days)-1)
	}
	for _, s := range []string{"ghost"} {
		if n := len(srcs[s].fetchedDays()); n != 0 {
			t.Errorf("unmapped %s fetched %d days", s, n)
		}
	}

	// The next run, with c's prefix allowed, exports exactly c's days.
	store.denied = ""
	fo.FailOnUnmapped = true
	before := store.putCount()
	sum, err = app.Run(context.Background(), fo)
	if !errors.Is(err, app.ErrUnmappedClusters) || errors.Is(err, app.ErrDaysFailed) || !strings.Contains(err.Error(), "ghost") {
		t.Fatalf("err = %v, want ErrUnmappedClusters naming ghost", err)
	}
	if n := store.putCount() - before; n != len(days) {
		t.Errorf("second run wrote %d objects, want c's %d days", n, len(days))
	}
	if got := sum.Clusters[2]; len(got.Days) != len(days) || got.ID != "c" {
		t.Errorf("c: %+v", got)
	}
}

// A prefix that cannot be listed fails its clusters' planning, every one
// of their available days counted as a failed cluster-day, and nothing
// else: the other prefix's cluster lands.
func TestRunClustersPlanningFailure(t *testing.T) {
	t.Parallel()
	days := windowDays(t)
	byCluster := map[string][]exporter.DayTotal{}
	srcs := map[string]*memSource{}
	for _, id := range []string{"a", "c"} {
		s := &memSource{days: map[time.Time]fetchFunc{}}
		for _, d := range days {
			s.days[d] = rows(id, 1)
			byCluster[id] = append(byCluster[id], exporter.DayTotal{Day: d})
		}
		srcs[id] = s
	}
	store := &fleetStore{memStore: newMemStore(), lists: map[string]int{}, listDenied: "account_id=444455556666/region=eu-west-1/"}
	var logs strings.Builder
	fo := options(nil, store)
	fo.Available = func(context.Context, time.Time, time.Time) (map[string][]exporter.DayTotal, error) {
		return byCluster, nil
	}
	fo.Clusters = []app.Cluster{
		fleetMember("a", "111122223333", "us-east-1", "alpha", srcs["a"]),
		fleetMember("c", "444455556666", "eu-west-1", "gamma", srcs["c"]),
		// A mistyped id: mapped, but Kubecost has no such cluster.
		fleetMember("typo", "111122223333", "us-east-1", "delta", &memSource{days: map[time.Time]fetchFunc{}}),
	}
	fo.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	for i, c := range fo.Clusters {
		fo.Clusters[i].Logger = fo.Logger.With("cluster", c.ID) // as the wiring names a fleet's clusters
	}
	sum, err := app.Run(context.Background(), fo)
	if !strings.Contains(logs.String(), "no data in the window for this cluster") || !strings.Contains(logs.String(), "cluster=typo") ||
		strings.Count(logs.String(), "no data in the window") != 1 {
		t.Errorf("want one warning naming the mapped cluster without data:\n%s", logs.String())
	}
	if !errors.Is(err, app.ErrDaysFailed) {
		t.Fatalf("err = %v, want ErrDaysFailed", err)
	}
	if c := sum.Clusters[1]; c.PlanErr == nil || len(c.Failed()) != len(days) || len(srcs["c"].fetchedDays()) != 0 {
		t.Errorf("c: plan error %v, %d failed days, %d fetched", c.PlanErr, len(c.Failed()), len(srcs["c"].fetchedDays()))
	}
	if d, _, _ := sum.Written(); d != len(days) || len(sum.Clusters[0].Failed()) != 0 {
		t.Errorf("a: wrote %d cluster-days, want %d", d, len(days))
	}
}
