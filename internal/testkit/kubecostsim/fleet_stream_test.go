package kubecostsim

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// heapWriter is an http.ResponseWriter that keeps nothing of the body: it
// counts bytes and allocations (one "totalCost" key each), and samples the
// live heap every few MiB so that a buffered body would show.
type heapWriter struct {
	h       http.Header
	status  int
	n       int64
	allocs  int
	tail    []byte // the end of the previous write, for keys cut in two
	next    int64
	maxHeap uint64
}

var totalCostKey = []byte(`"totalCost":`)

func (w *heapWriter) Header() http.Header { return w.h }
func (w *heapWriter) WriteHeader(s int)   { w.status = s }

func (w *heapWriter) Write(p []byte) (int, error) {
	// Count keys in tail+head of p once, then in p; tail is shorter than
	// the key so a key is never counted twice.
	joined := append(w.tail, p[:min(len(p), len(totalCostKey)-1)]...)
	w.allocs += bytes.Count(joined, totalCostKey) + bytes.Count(p, totalCostKey)
	w.tail = append(w.tail[:0], p[max(0, len(p)-len(totalCostKey)+1):]...)
	w.n += int64(len(p))
	if w.n >= w.next {
		w.next = w.n + 16<<20
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		w.maxHeap = max(w.maxHeap, ms.HeapAlloc)
	}
	return len(p), nil
}

// A fleet day is streamed member after member: the live heap stays far
// below the body, and the body holds every member's allocations.
func TestFleetStreamsFleetDay(t *testing.T) {
	containers := 400 // about 10k hourly allocations a member and day
	if !testing.Short() && !raceEnabled {
		containers = 11000 // 4 members: over 1M allocations, about 3 GB
	}
	cfg := FleetConfig{Flavor: FlavorKubecost, Now: func() time.Time { return fleetNow }}
	for i := range 4 {
		cfg.Members = append(cfg.Members, Member{Account: "111122223333",
			Config: Config{Seed: int64(i + 1), ClusterName: fmt.Sprintf("c%d", i), ContainersPerHour: containers}})
	}
	f := NewFleet(cfg)
	day := fleetNow.Truncate(24*time.Hour).AddDate(0, 0, -3)
	want := 0
	for _, m := range f.Members() {
		tr, err := f.Truth(m.Config.ClusterName, day, time.Hour, containerAgg)
		if err != nil {
			t.Fatal(err)
		}
		want += tr.Count
	}

	req := httptest.NewRequest(http.MethodGet, "/model/allocation?"+fleetDayQuery(day, "idle", "false", "step", "1h").Encode(), nil)
	w := &heapWriter{h: http.Header{}, status: http.StatusOK}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	f.ServeHTTP(w, req)

	if w.status != http.StatusOK || w.allocs != want || want < 4*containers {
		t.Fatalf("status %d, %d allocations streamed, truth %d", w.status, w.allocs, want)
	}
	grew := int64(w.maxHeap) - int64(before.HeapAlloc)
	t.Logf("%d allocations, %d MiB body, heap grew by at most %d MiB", w.allocs, w.n>>20, grew>>20)
	if grew > w.n/8 || grew > 256<<20 {
		t.Errorf("heap grew by %d MiB for a %d MiB body: the fleet day is buffered", grew>>20, w.n>>20)
	}
	if reqs := f.Requests(); len(reqs) != 1 || len(reqs[0].Clusters) != 4 {
		t.Errorf("request log %+v, want one request built from the 4 members", reqs)
	}
}
