package metrics

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/push"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Job is the Pushgateway job label of every push.
const Job = "kubecost-s3-exporter"

// Pusher sends a run's metrics to a Pushgateway under the grouping key job=<Job>,
// cluster=<Cluster>.
type Pusher struct {
	URL     string // Pushgateway base URL, e.g. http://pushgateway.monitoring:9091
	Cluster string // EKS cluster name
	// Timeout bounds the push; default 10s. It runs even after the run's context was
	// cancelled, so an interrupted run is still reported.
	Timeout time.Duration
	Client  *http.Client // nil: a client with Timeout
	Logger  *slog.Logger // nil: discard
}

// Push sends r with the Pushgateway's POST (add): metrics of the same name replace the
// previous ones, others stay (last_success_timestamp_seconds of the last good run). A failed
// push is logged once and returned; callers must not fail the run for it.
func (p Pusher) Push(ctx context.Context, r Run) error {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	client := cmp.Or(p.Client, &http.Client{Timeout: timeout})
	log := cmp.Or(p.Logger, slog.New(slog.DiscardHandler))
	err := push.New(p.URL, Job).
		Grouping("cluster", p.Cluster).
		Gatherer(Registry(r)).
		Client(client).
		AddContext(ctx)
	if err != nil {
		// The URL may carry basic-auth credentials: never log them.
		err = fmt.Errorf("metrics: push to %s: %s", exporter.Redact(p.URL), exporter.Redact(err.Error()))
		log.Warn("could not push metrics; the run's result is unaffected", "error", err.Error())
		return err
	}
	log.Debug("metrics pushed", "cluster", p.Cluster)
	return nil
}
