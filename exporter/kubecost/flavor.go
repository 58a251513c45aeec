package kubecost

// Flavor is the Allocation API a Client talks to. The servers agree on
// window, aggregate, step and accumulate, but not on the names of the idle
// and sharing parameters, and each ignores the names it does not know: a
// Kubecost query sent to OpenCost silently returns no idle cost at all.
type Flavor string

const (
	// FlavorKubecost is Kubecost's frontend, /model/allocation.
	FlavorKubecost Flavor = "kubecost"
	// FlavorCostModel is Kubecost's cost-model container, /allocation: the
	// same handler and parameters as the frontend (Kubecost's API docs:
	// "when querying the cost-model container directly, the /model part of
	// the URI should be removed").
	FlavorCostModel Flavor = "cost-model"
	// FlavorOpenCost is OpenCost, /allocation/compute.
	FlavorOpenCost Flavor = "opencost"
)

// flavorParams are the parameters a day's query adds per flavour, to mean
// what CCA's Kubecost query means: idle cost included as its own
// allocations, split by node where the server can, tenancy costs shared.
var flavorParams = map[Flavor][][2]string{
	// What the Python CCA exporter sends, so the rows match its rows.
	FlavorKubecost:  kubecostParams,
	FlavorCostModel: kubecostParams,
	// OpenCost's ComputeAllocationHandler reads includeIdle (default
	// false) and idleByNode; shareIdle stays false so idle is not folded
	// into the workloads. It has no splitIdle and no shareTenancyCosts.
	FlavorOpenCost: {{"includeIdle", "true"}, {"idleByNode", "true"}},
}

var kubecostParams = [][2]string{{"idle", "true"}, {"splitIdle", "true"}, {"idleByNode", "true"}, {"shareTenancyCosts", "true"}}

// availParams are the idle parameters of the availability query
// (aggregate=cluster), per flavour: each day's total must include idle, so
// that a change in idle alone (a late reconciliation of node prices) is
// seen as drift, and, for a federated Kubecost, idle must be split by
// cluster. Without splitIdle, Kubecost's defaults (idle=true,
// splitIdle=false) merge every cluster's idle into one "__idle__" whose
// properties agree on no cluster.
var availParams = map[Flavor][][2]string{
	// One "<cluster>/__idle__" per cluster and day.
	FlavorKubecost:  {{"idle", "true"}, {"splitIdle", "true"}},
	FlavorCostModel: {{"idle", "true"}, {"splitIdle", "true"}},
	// OpenCost's handler has no splitIdle: one "__idle__" per day, of its
	// cluster when it serves one, of no cluster when it serves several.
	FlavorOpenCost: {{"includeIdle", "true"}},
}

// flavorLimits says, per flavour, what its server cannot do of CCA's query.
var flavorLimits = map[Flavor]string{
	FlavorOpenCost: "OpenCost cannot split idle cost by node: every day (or hour) has one __idle__ row " +
		"holding the whole cluster's idle cost, with no node; and it has no tenancy costs to share. " +
		"Federated (an OpenCost serving several clusters), it cannot split idle by cluster either: " +
		"the clusters' day totals leave idle out, and each cluster-day's __idle__ row is of no cluster",
}

// server is how messages name the server a flavour talks to: the one the
// user configured, so that an OpenCost's failure does not read as
// Kubecost's.
func (f Flavor) server() string {
	switch f {
	case FlavorOpenCost:
		return "OpenCost"
	case FlavorCostModel:
		return "Kubecost's cost-model"
	}
	return "Kubecost"
}
