package kubecostsim

import (
	"encoding/json"
	"strings"
	"testing"
)

// rowNames returns the allocation names of a response, set by set.
func rowNames(t *testing.T, body []byte) [][]string {
	t.Helper()
	var r struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	var out [][]string
	for _, set := range r.Data {
		var names []string
		for k := range set {
			names = append(names, k)
		}
		out = append(out, names)
	}
	return out
}

// kubecost/kubecost#4508: after an aggregate=cluster query, the next n
// container-level queries come back with the cluster aggregation and
// the window asked; then the server answers as asked again.
func TestStaleAnswers(t *testing.T) {
	srv := NewServer(testConfig())
	defer srv.Close()
	srv.Sim.SetStaleAnswers(2)
	container := qv(day(17), day(18), "1d", "cluster,node,namespace,pod,container")

	// Before any other query there is nothing to be stale with.
	if _, body := mustGet(t, srv, container); len(rowNames(t, body)[0]) < 10 {
		t.Fatalf("first query answered stale: %s", body)
	}
	mustGet(t, srv, qv(day(10), day(18), "1d", "cluster"))
	for i := range 3 {
		_, body := mustGet(t, srv, container)
		sets := rowNames(t, body)
		if len(sets) != 1 {
			t.Fatalf("query %d: %d sets, want the one day asked", i, len(sets))
		}
		stale := true
		for _, n := range sets[0] {
			if strings.Count(n, "/") == 4 {
				stale = false
			}
		}
		if want := i < 2; stale != want {
			t.Errorf("query %d: stale=%v, want %v: %v", i, stale, want, sets[0])
		}
	}
	if n := srv.Sim.StaleAnswersLeft(); n != 0 {
		t.Errorf("%d stale answers left", n)
	}
	// Requests are recorded as the client sent them, stale or not.
	n := 0
	for _, r := range srv.Sim.Requests() {
		if r.Query.Get("aggregate") == "cluster,node,namespace,pod,container" {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d container-level requests recorded, want 4", n)
	}
}
