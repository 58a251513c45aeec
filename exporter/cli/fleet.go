package cli

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/metrics"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// runFleet is RunWith for a federated Kubecost (CLUSTER_ARNS or
// CLUSTER_MAP_FILE): every mapped cluster, each under its own keys.
func runFleet(ctx context.Context, cfg *config.Config, lookup func(string) (string, bool), log *slog.Logger, h Hooks, start time.Time) int {
	reqs := &metrics.Requests{}
	fo, err := wireFleet(ctx, cfg, lookup, log, reqs)
	if err != nil {
		log.Error("cannot start", "error", err.Error())
		sum := app.FleetSummary{Duration: time.Since(start)}
		summarizeFleet(log, sum, err)
		pushFleetMetrics(ctx, cfg, lookup, log, start, sum, err, nil)
		return ExitRuntime
	}
	fo.Now, fo.WallClock = h.Now, h.WallClock
	sum, err := app.RunFleet(ctx, fo)
	sum.Duration = time.Since(start)
	if err != nil && !errors.Is(err, app.ErrDaysFailed) && !errors.Is(err, app.ErrUnmappedClusters) {
		log.Error("run failed", "error", err.Error())
	}
	summarizeFleet(log, sum, err)
	pushFleetMetrics(ctx, cfg, lookup, log, start, sum, err, reqs)
	if err != nil {
		return ExitRuntime
	}
	return ExitOK
}

// wireFleet builds a federated run: one member per mapped cluster, each
// with its own projection (eksClusterName and clusterid from its ARN),
// keys and fingerprint, all sharing one store and one Kubecost client.
func wireFleet(ctx context.Context, cfg *config.Config, lookup func(string) (string, bool), log *slog.Logger, reqs *metrics.Requests) (app.FleetOptions, error) {
	bare := schema.NewProjection("", "", cfg.LabelKeys(), cfg.AnnotationKeys())
	p, err := wireParts(ctx, cfg, lookup, log, reqs, bare)
	if err != nil {
		return app.FleetOptions{}, err
	}
	fo := app.FleetOptions{Options: sharedOptions(cfg, p, log), Days: p.client.ClusterDays, FailOnUnmapped: bool(cfg.FailOnUnmapped)}
	var ids []string
	for _, m := range cfg.Members() {
		proj := schema.NewProjection(m.ARN, m.Name, cfg.LabelKeys(), cfg.AnnotationKeys())
		fo.Members = append(fo.Members, app.FleetMember{
			ID: m.ID, ARN: m.ARN, Source: p.client.ForCluster(m.ID, proj),
			Layout:     exporter.Layout{Prefix: cfg.S3Prefix, Account: m.Account, Region: m.Region, Cluster: m.Name},
			Projection: proj, NewEncoder: encoders(proj, p.codec),
			Fingerprint: reexport(cfg, p.client, m.ARN).Fingerprint,
			Metadata:    metadata(cfg, m.ARN),
		})
		ids = append(ids, m.ID+"="+m.Name)
	}
	fo.Reexport = reexport(cfg, p.client, "")
	log.Info("starting federated export",
		"version", exporter.Version, "clusters", ids, "kubecost", exporter.RedactURL(cfg.AllocationURL()),
		"cluster_filter", cfg.ClusterFilter, "aggregate", cfg.AggregateParam(), "granularity", cfg.Granularity,
		"destination", p.dest, "bucket_owner", cfg.BucketOwner(), "codec", p.codec,
		"labels", cfg.LabelKeys(), "annotations", cfg.AnnotationKeys())
	return fo, nil
}

// maxListed bounds the ids the summary line names; the ERROR and WARN
// lines before it name every one.
const maxListed = 2

// summarizeFleet writes the federated run's last line: the counts of
// summarize, plus the clusters, the unmapped ones and the failed
// cluster-days ("<id>/<YYYY-MM-DD>"), which the next run resumes.
func summarizeFleet(log *slog.Logger, sum app.FleetSummary, err error) {
	days, rows, bytes := sum.Written()
	planned := 0
	for _, c := range sum.Clusters {
		planned += len(c.Plan.Exports())
	}
	failed := sum.FailedClusterDays()
	attrs := []any{
		"clusters", len(sum.Clusters), "unmapped_clusters", len(sum.Unmapped),
		"cluster_days_planned", planned, "cluster_days_written", days, "cluster_days_failed", len(failed),
		"rows", rows, "bytes", bytes, "duration", sum.Duration.Round(time.Millisecond).String(),
	}
	if len(sum.Unmapped) > 0 {
		attrs = append(attrs, "unmapped", listed(sum.Unmapped))
	}
	if len(failed) > 0 {
		attrs = append(attrs, "failed_cluster_days", byCluster(failed))
	}
	if err != nil {
		log.Error("run summary: failed", append(attrs, "error", briefFleetError(sum, err))...)
		return
	}
	log.Info("run summary: ok", attrs...)
}

// briefFleetError is the summary's account of a failure: the first failed
// cluster-day's short reason (the count and the list are beside it), or
// the error that stopped the run.
func briefFleetError(sum app.FleetSummary, err error) string {
	if errors.Is(err, app.ErrDaysFailed) {
		for _, c := range sum.Clusters {
			if f := c.Failed(); len(f) > 0 {
				return clip(reason(f[0].Err), 50)
			}
		}
	}
	if errors.Is(err, app.ErrUnmappedClusters) {
		return "unmapped clusters (FAIL_ON_UNMAPPED_CLUSTERS)"
	}
	return reason(err)
}

// byCluster shortens "<id>/<day>" items to one per cluster, its first
// failed day and how many more: "prod-us/2026-11-02+15".
func byCluster(cds []string) string {
	var out []string
	for i := 0; i < len(cds); {
		id, _, _ := strings.Cut(cds[i], "/")
		j := i + 1
		for j < len(cds) && strings.HasPrefix(cds[j], id+"/") {
			j++
		}
		item := cds[i]
		if j-i > 1 {
			item += "+" + strconv.Itoa(j-i-1)
		}
		out = append(out, item)
		i = j
	}
	return listed(out)
}

func listed(xs []string) string {
	if len(xs) <= maxListed {
		return strings.Join(xs, ",")
	}
	return strings.Join(xs[:maxListed], ",") + ",..."
}

// pushFleetMetrics pushes one group per mapped cluster, as per-cluster
// exporters would: the dashboards and alerts stay per cluster. Which
// clusters failed is metrics.FleetOutcomes' decision. Kubecost requests are
// the whole run's, in every group.
func pushFleetMetrics(ctx context.Context, cfg *config.Config, lookup func(string) (string, bool), log *slog.Logger, start time.Time, sum app.FleetSummary, err error, reqs *metrics.Requests) {
	if cfg.PushgatewayURL == "" {
		return
	}
	end := time.Now()
	var names []string
	for _, m := range cfg.Members() {
		names = append(names, m.Name)
	}
	id := metrics.RunID(lookup, start)
	for _, o := range metrics.FleetOutcomes(names, sum, err) {
		_ = metrics.Pusher{URL: cfg.PushgatewayURL, Cluster: o.Cluster, Logger: log}.Push(ctx,
			metrics.Run{Start: start, End: end, Summary: o.Summary, Err: o.Err, Requests: reqs, RunID: id})
	}
}
