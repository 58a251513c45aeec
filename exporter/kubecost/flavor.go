package kubecost

import "strings"

// Flavor is the Allocation API a Client talks to. The servers agree on window, aggregate, step
// and accumulate, not on the idle and sharing parameters' names, and ignore names they do not
// know: a Kubecost query sent to OpenCost silently returns no idle cost at all.
type Flavor string

const (
	// FlavorKubecost is Kubecost's frontend, /model/allocation.
	FlavorKubecost Flavor = "kubecost"
	// FlavorCostModel is Kubecost's cost-model container, /allocation: the frontend's handler and
	// parameters (Kubecost's API docs: "when querying the cost-model container directly, the
	// /model part of the URI should be removed").
	FlavorCostModel Flavor = "cost-model"
	// FlavorOpenCost is OpenCost, /allocation/compute.
	FlavorOpenCost Flavor = "opencost"
)

// Flavors are the accepted flavours, the default first: config validates KUBECOST_API_FLAVOR
// by them, and its tests hold --help, the README and the chart's schema to them.
func Flavors() []Flavor { return []Flavor{FlavorKubecost, FlavorCostModel, FlavorOpenCost} }

// Path is the flavour's Allocation API path under the base URL, "" for an unknown flavour.
func (f Flavor) Path() string { s, _ := f.spec(); return s.path }

// Discovered reports whether Candidates (KUBECOST_API_ENDPOINT unset) name the flavour's service.
func (f Flavor) Discovered() bool { s, _ := f.spec(); return s.discovered }

// server is what the exporter knows of one flavour's server: each quirk is a field, set in
// spec, that the query, the messages and config's validation read.
type server struct {
	name string // how messages name it: an OpenCost's failure must not read as Kubecost's
	path string
	// day are the parameters that make a day's query mean CCA's Kubecost query: idle as its own
	// allocations, split by node where the server can, tenancy costs shared.
	day [][2]string
	// avail are the availability query's (aggregate=cluster): a day's total includes idle, so a
	// change in idle alone (a late reconciliation of node prices) is drift, and, federated, idle
	// is split by cluster: Kubecost's defaults (idle=true, splitIdle=false) merge it into one "__idle__".
	avail      [][2]string
	filters    []ClusterFilter // the cluster filters it reads; it answers others with every cluster's rows
	discovered bool            // Candidates name its service
	limit      string          // what it cannot do of CCA's query, logged once per run
	filterHint string          // what to do when it ignored the cluster filter; "": the filter's hint
}

// spec is the flavour's server, and false for an unknown flavour.
func (f Flavor) spec() (server, bool) {
	kubecost := server{
		name: "Kubecost", path: "/model/allocation", discovered: true,
		// What the Python CCA exporter sends, so the rows match its rows.
		day: [][2]string{{"idle", "true"}, {"splitIdle", "true"}, {"idleByNode", "true"}, {"shareTenancyCosts", "true"}},
		// One "<cluster>/__idle__" per cluster and day.
		avail:   [][2]string{{"idle", "true"}, {"splitIdle", "true"}},
		filters: []ClusterFilter{FilterV2, FilterV1},
	}
	switch f {
	case FlavorKubecost:
		return kubecost, true
	case FlavorCostModel:
		// The frontend's handler behind another path, on a service the candidates do not name.
		kubecost.name, kubecost.path, kubecost.discovered = "Kubecost's cost-model", "/allocation", false
		return kubecost, true
	case FlavorOpenCost:
		return server{
			name: "OpenCost", path: "/allocation/compute",
			// OpenCost's ComputeAllocationHandler reads includeIdle (default false) and idleByNode;
			// shareIdle stays false, not folding idle into workloads. No splitIdle, no shareTenancyCosts.
			day: [][2]string{{"includeIdle", "true"}, {"idleByNode", "true"}},
			// One "__idle__" per day, of its cluster when it serves one, of none when it serves several.
			avail:   [][2]string{{"includeIdle", "true"}},
			filters: []ClusterFilter{FilterV2},
			limit: "OpenCost cannot split idle cost by node: every day (or hour) has one __idle__ row " +
				"holding the whole cluster's idle cost, with no node; and it has no tenancy costs to share. " +
				"Federated (an OpenCost serving several clusters), it cannot split idle by cluster either: " +
				"the clusters' day totals leave idle out, and each cluster-day's __idle__ row is of no cluster",
			filterHint: "OpenCost reads filter on /allocation/compute from 1.115, the first release after opencost/opencost#3155 " +
				"(May 2025): upgrade it, or export each cluster from its own OpenCost with CLUSTER_ID",
		}, true
	}
	return server{}, false
}

func join[S ~string](names []S) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = string(n)
	}
	return strings.Join(out, ", ")
}
