package kubecost

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// ErrOtherAnswer marks a response that answers another query than the one sent: its rows lack a
// property the aggregation asks for, or are of another window or (federated) cluster. Kubecost
// 3.x does this now and then (kubecost/kubecost#4508, chart 3.0.4, closed without a fix:
// /model/allocation "sometimes maintains the aggregation from a previous, different query", and
// filters "stick"), and a stored wrong answer stays wrong: the next run sees the day as current.
// It is retried (the same query answers right a moment later); a day that keeps getting one fails.
var ErrOtherAnswer = errors.New("the server answered another query than the one asked")

// serverNamed are the markers of rows the core names itself, not after the aggregated
// properties, so they may lack any (OpenCost core/pkg/opencost allocation.go: IdleSuffix,
// UnallocatedSuffix, UnmountedSuffix, SharedSuffix, ExternalSuffix; Kubecost's Allocation API
// docs, "Special types of allocation", name the first three). The core tests them with
// strings.Contains (Allocation.IsIdle, IsUnallocated, IsUnmounted, IsExternal), so
// "<cluster>/<node>/__idle__" and "<cluster>//__unmounted__/__unmounted__/__unmounted__" (an
// unmounted volume has no node: costmodel's getUnmountedPodForCluster) are such rows too.
var serverNamed = []string{schema.IdleName, schema.UnallocatedName, schema.UnmountedName, schema.SharedName, schema.ExternalName}

func isServerNamed(name string) bool {
	return slices.ContainsFunc(serverNamed, func(s string) bool { return strings.Contains(name, s) })
}

// checkedKeys are the aggregate keys every row must carry: the core names a row after them
// (GenerateKey) and always knows them for a container (OpenCost's allocation queries select
// container!="" and node!=""). Other keys (controller, label:...) may be empty: the core then
// names the row __unallocated__.
var checkedKeys = map[string]int{
	"cluster":   schema.PropCluster,
	"node":      schema.PropNode,
	"namespace": schema.PropNamespace,
	"pod":       schema.PropPod,
	"container": schema.PropContainer,
}

// answerCheck passes on, one at a time, the rows of a response that answer the query sent, so
// nothing of a wrong answer reaches the sink; it fails the response at the first row that
// answers another query (answerError).
//
// In a federated cluster-day it passes only the asked cluster's rows, and drops and counts other
// clusters' idle rows. They come because, with idle not shared, the core (OpenCost's
// AllocationSet.AggregateBy, which Kubecost's cost model runs too) adds every idle allocation
// before it applies the filter, only scaling each by its "idle filtration coefficient" (the
// share of the node's or cluster's allocated cost that passed the filter): another cluster's
// node that ran something keeps an idle row of cost 0, one that ran nothing its full idle cost:
// kept, they would file other clusters' idle under this one's keys.
type answerCheck struct {
	sink      exporter.RecordSink
	server    string // the configured server, as messages name it
	aggregate string // as sent
	keys      []int
	keyNames  []string

	// The window being fetched and its sets' step, in ms; set by at before each request.
	start, end, step int64
	what             string // the window, as the query sent it

	// cluster is the one cluster a federated cluster-day asks for, param the filter sent,
	// hint what to do when the server ignores it.
	cluster, param, hint string
	dropped              int     // other clusters' idle rows dropped
	droppedCost          float64 // their totalCost
	merged               int     // idle rows of no cluster, kept (see Write)
	// rows and idle count the rows passed to the sink and their idle rows, after the cluster
	// check: only this cluster's own idle says idle came back.
	rows, idle int

	// perSet (availability query, aggregate=cluster) fails a row not named after its cluster, or
	// a second row of one cluster in one set: the answer is of a finer aggregation.
	perSet bool
	set    int64               // start of the set seen holds the clusters of
	seen   map[string]struct{} // clusters of the current set
}

func newAnswerCheck(sink exporter.RecordSink, server, aggregate string) *answerCheck {
	c := &answerCheck{sink: sink, server: server, aggregate: aggregate}
	for _, k := range strings.Split(aggregate, ",") {
		if i, ok := checkedKeys[strings.TrimSpace(k)]; ok {
			c.keys, c.keyNames = append(c.keys, i), append(c.keyNames, strings.TrimSpace(k))
		}
	}
	return c
}

// at sets the window of the next response, whose sets are step long.
func (c *answerCheck) at(w window, step time.Duration) {
	c.start, c.end, c.step = w.start.UnixMilli(), w.end.UnixMilli(), step.Milliseconds()
	c.what = w.String()
}

func (c *answerCheck) Write(r *schema.Record) error {
	// A set of the window asked: [start + k·step, start + (k+1)·step).
	if r.Start < c.start || r.End > c.end || r.End-r.Start != c.step || (r.Start-c.start)%c.step != 0 {
		return c.other(r, fmt.Sprintf("its window %s is not a %s set of the window asked, %s", window{start: time.UnixMilli(r.Start), end: time.UnixMilli(r.End)},
			stepParam(time.Duration(c.step)*time.Millisecond), c.what))
	}
	for i, k := range c.keys {
		// The name is looked at only when a property is missing, so a common row costs little.
		if r.Props[k] == "" && !isServerNamed(r.Name) {
			return c.other(r, fmt.Sprintf("it has no %s, although aggregate=%s asks for it", c.keyNames[i], c.aggregate))
		}
	}
	// After the shape: an unfiltered stale answer (#4508) is that, not a server ignoring the
	// filter, which answers rows of the shape asked, of every cluster.
	if c.cluster != "" {
		if keep, err := c.ofCluster(r); !keep {
			return err
		}
	}
	if c.perSet {
		if err := c.oneOfCluster(r); err != nil {
			return err
		}
	}
	c.rows++
	if isIdle(r.Name, r.Props[schema.PropCluster]) {
		c.idle++
	}
	return c.sink.Write(r)
}

// oneOfCluster checks that a row of the availability answer is named after its cluster (as
// GenerateKey names it) and its cluster's only one in its set (sets come in order).
func (c *answerCheck) oneOfCluster(r *schema.Record) error {
	if isServerNamed(r.Name) {
		return nil
	}
	id := r.Props[schema.PropCluster]
	if r.Name != id {
		return c.other(r, fmt.Sprintf("its name is not its cluster %q: the answer is not aggregated by cluster", id))
	}
	if r.Start != c.set {
		clear(c.seen)
		c.set = r.Start
	}
	if _, dup := c.seen[id]; dup {
		return c.other(r, fmt.Sprintf("it is the second row of cluster %q in one set: the answer is not aggregated by cluster", id))
	}
	c.seen[id] = struct{}{}
	return nil
}

// ofCluster reports whether r, a row of a cluster-day, goes to the sink: the asked cluster's
// rows do; other clusters' idle rows are dropped (nil error); any other row is an error.
func (c *answerCheck) ofCluster(r *schema.Record) (bool, error) {
	got := r.Props[schema.PropCluster]
	switch {
	case got == c.cluster:
	case got == "" && isIdle(r.Name, got):
		// Idle merged across clusters (OpenCost has no splitIdle) holds this cluster's idle: kept.
		c.merged++
	case isIdle(r.Name, got):
		c.dropped++
		c.droppedCost += r.Num[totalCost]
		return false, nil
	default:
		return false, &answerError{foreign: true, msg: fmt.Sprintf("%s: a row of cluster %q in the response for cluster %q (sent %s); %s",
			said(c.server, ErrFilterIgnored), got, c.cluster, c.param, c.hint)}
	}
	return true, nil
}

func (c *answerCheck) other(r *schema.Record, why string) error {
	return &answerError{msg: fmt.Sprintf("%s (a stale answer, as kubecost/kubecost#4508 reports of Kubecost 3.x): row %q: %s",
		said(c.server, ErrOtherAnswer), sanitize(r.Name, 200), why)}
}

func (c *answerCheck) Reset() error {
	c.dropped, c.droppedCost, c.merged, c.rows, c.idle = 0, 0, 0, 0, 0
	clear(c.seen)
	return c.sink.Reset()
}

// said is a sentinel's sentence ("the server ...") naming the configured server instead.
func said(server string, sentinel error) string {
	return server + " " + strings.TrimPrefix(sentinel.Error(), "the server ")
}

// saidError is a sentinel said of the configured server.
type saidError struct {
	server string
	err    error
}

func (e *saidError) Error() string { return said(e.server, e.err) }
func (e *saidError) Unwrap() error { return e.err }

// answerError is a response that answers another query. A row of another cluster in a
// cluster-day (foreign) is also ErrFilterIgnored and, once retries did not help,
// exporter.ErrServerUnsupported: a server that ignores the filter answers every cluster-day so.
type answerError struct {
	foreign bool
	msg     string
}

func (e *answerError) Error() string { return e.msg }

func (e *answerError) Is(target error) bool {
	switch target {
	case ErrOtherAnswer:
		return true
	case ErrFilterIgnored, exporter.ErrServerUnsupported:
		return e.foreign
	}
	return false
}

// filterHint is what to do when the server answers a cluster-day with other clusters' rows.
func filterHint(s server, cf ClusterFilter, id string) string {
	switch {
	case s.filterHint != "":
		return s.filterHint
	case cf == FilterV1:
		return fmt.Sprintf("filterClusters matches cluster ids and names, and a trailing * is a prefix wildcard: "+
			"check that no other cluster is named %q, or use KUBECOST_CLUSTER_FILTER=v2 (Kubecost 1.96 or later)", id)
	}
	return "Kubecost reads filter=cluster:\"<id>\" from 1.96: set KUBECOST_CLUSTER_FILTER=v1 for an older one " +
		"(a Kubecost 3.x may also have answered another query, kubecost/kubecost#4508)"
}

// IdleObserver is told of each day with allocations but no idle row although the query asked
// for idle. An Observer that also implements it gets these calls, concurrently.
type IdleObserver interface {
	ObserveDayWithoutIdle()
}

// checkIdle reports what a fetched day's rows, and other clusters' dropped idle rows, show.
func (c *Client) checkIdle(day time.Time, cluster string, cc *answerCheck) {
	if cc.rows > 0 && cc.idle == 0 {
		// Every day query asks for idle; a server ignoring the parameters (Kubecost's idle=true
		// at an OpenCost, which reads includeIdle) drops every idle dollar without error.
		if o, ok := c.opts.Observer.(IdleObserver); ok {
			o.ObserveDayWithoutIdle()
		}
		c.noIdleWarn.Do(func() {
			c.log.Warn("the server returned a day with allocations but no idle row, although the query asked for idle: "+
				"it probably ignores this flavour's idle parameters, and the day's idle cost is missing; "+
				"check KUBECOST_API_FLAVOR against the server (reported once per run, counted in the metrics)",
				"day", day.Format(time.DateOnly), "cluster", cluster, "flavor", string(c.opts.Flavor),
				"server", c.srv.name, "rows", cc.rows)
		})
	}
	if cluster == "" {
		return
	}
	if cc.dropped > 0 {
		c.log.Debug("dropped the idle rows of other clusters that the server returned with this cluster's filter",
			"day", day.Format(time.DateOnly), "cluster", cluster, "rows", cc.dropped, "total_cost", exporter.RoundTotal(cc.droppedCost))
	}
	if cc.merged > 0 {
		c.mergedIdleWarn.Do(func() {
			c.log.Warn("the server merged the idle cost of several clusters into one __idle__ row of no cluster "+
				"(it cannot split idle by cluster): the row is kept with each cluster's day, and may also hold the idle "+
				"cost of other clusters' nodes that ran nothing (reported once per run)",
				slog.String("day", day.Format(time.DateOnly)), slog.String("cluster", cluster), slog.String("flavor", string(c.opts.Flavor)))
		})
	}
}
