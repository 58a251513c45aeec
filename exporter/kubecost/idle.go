package kubecost

import (
	"log/slog"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// IdleObserver is told of each day that came back with allocations but no
// idle row although the query asked for idle. An Observer that also
// implements it gets these calls; it must be safe for concurrent use.
type IdleObserver interface {
	ObserveDayWithoutIdle()
}

// checkIdle looks at a fetched day: the rows that reached the sink, and,
// for a cluster's day, the idle rows of other clusters dropped on the way.
func (c *Client) checkIdle(day time.Time, cluster string, cc *answerCheck) {
	if cc.rows > 0 && cc.idle == 0 {
		// Every flavour's day query asks for idle; a server that ignores
		// the parameters it was sent (Kubecost's idle=true at an OpenCost,
		// which reads includeIdle) drops every idle dollar without error.
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
