package kubecost

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// ClusterFilter is how a query asks a federated Kubecost for one cluster.
type ClusterFilter string

const (
	// FilterV2 is Kubecost 2.x's filter=cluster:"<id>", which OpenCost's /allocation/compute
	// also reads (applying it before aggregating).
	FilterV2 ClusterFilter = "v2"
	// FilterV1 is Kubecost 1.x's filterClusters=<id>. It matches cluster ids and names, and a
	// trailing * is a prefix wildcard, so it can select several clusters (ClusterSource's row
	// check catches that). OpenCost ignores it.
	FilterV1 ClusterFilter = "v1"
)

// ClusterFilters are the accepted cluster filters, the default first.
func ClusterFilters() []ClusterFilter { return []ClusterFilter{FilterV2, FilterV1} }

// FilterProblem says, as a KUBECOST_CLUSTER_FILTER error, why flavor's server cannot take
// filter, or "" when it can (an unknown flavour is KUBECOST_API_FLAVOR's error alone).
func FilterProblem(flavor Flavor, filter ClusterFilter) string {
	if !slices.Contains(ClusterFilters(), filter) {
		return "accepted: " + join(ClusterFilters())
	}
	if s, ok := flavor.spec(); ok && !slices.Contains(s.filters, filter) {
		k, _ := filter.param("")
		return fmt.Sprintf("%s does not read %s (%s); accepted with KUBECOST_API_FLAVOR=%s: %s", s.name, k, filter, flavor, join(s.filters))
	}
	return ""
}

// ClusterIDProblem says why id cannot be sent quoted in filter=cluster:"<id>", or "" when it can.
func ClusterIDProblem(id string) string {
	switch {
	case id == "":
		return "an empty cluster id"
	case len(id) > 253:
		return "a cluster id longer than 253 characters"
	case strings.ContainsAny(id, "\"\\,=*"):
		return fmt.Sprintf("cluster id %q contains one of \" \\ , = *", id)
	case strings.IndexFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return fmt.Sprintf("cluster id %q contains a control character", id)
	}
	return ""
}

// param is the query parameter that selects cluster id.
func (f ClusterFilter) param(id string) (string, string) {
	if f == FilterV1 {
		return "filterClusters", id
	}
	return "filter", `cluster:"` + id + `"`
}

// ClusterSource is one cluster of a federated Kubecost: its queries carry the cluster filter, so
// the primary builds a cluster-day per response instead of a fleet-day, with rows carrying the
// cluster's eksClusterName and clusterid (from its Projection).
type ClusterSource struct {
	c        *Client
	id       string
	decoders sync.Pool // *decoder bound to this cluster's projection
}

var _ exporter.AllocationSource = (*ClusterSource)(nil)

// ForCluster returns the source of cluster id, its rows completed with proj. It shares c's
// connections, retries and totals.
func (c *Client) ForCluster(id string, proj *schema.Projection) *ClusterSource {
	s := &ClusterSource{c: c, id: id}
	s.decoders.New = func() any { return newDecoder(proj) }
	return s
}

// ID is Kubecost's id of the cluster.
func (s *ClusterSource) ID() string { return s.id }

// AvailableDays returns this cluster's days from the fleet's availability query (a run over
// many clusters calls Client.ClusterDays once instead).
func (s *ClusterSource) AvailableDays(ctx context.Context, from, to time.Time) ([]exporter.DayTotal, error) {
	all, err := s.c.ClusterDays(ctx, from, to)
	if err != nil {
		return nil, err
	}
	return all[s.id], nil
}

// FetchDay streams this cluster's allocations of the UTC day starting at day into sink. A row
// of another cluster means the server ignored the filter (an OpenCost or Kubecost too old to
// read it, or a v1 filter matching a name): after retries the day fails rather than file it
// here, and the run stops (exporter.ErrServerUnsupported). Other clusters' idle rows are
// dropped: the core lets unshared idle skip the filter (see answerCheck).
func (s *ClusterSource) FetchDay(ctx context.Context, day time.Time, sink exporter.RecordSink) error {
	_, err := s.c.fetchDay(ctx, day, s.id, &s.decoders, sink)
	return err
}

// isIdle reports whether an allocation of cluster is one of the core's idle ones: "__idle__"
// (merged, or not split) or "<cluster>/__idle__" and "<cluster>/<node>/__idle__" (split idle,
// whose names the core never rewrites when it aggregates).
func isIdle(name, cluster string) bool {
	if name == schema.IdleName {
		return true
	}
	if cluster == "" {
		return false
	}
	rest, ok := strings.CutPrefix(name, cluster+"/")
	return ok && (rest == schema.IdleName || strings.HasSuffix(rest, "/"+schema.IdleName))
}
