package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/metrics"
)

// finish reports the run: metrics, then the summary, the last line whatever the push does (a
// failed push logs its own warning, and the summary says so).
func finish(ctx context.Context, cfg *config.Config, log *slog.Logger, start time.Time, runID string, sum app.Summary, err error, reqs *kubecost.Counter) {
	sum.Duration = time.Since(start)
	pushed := pushMetrics(ctx, cfg, log, start, runID, sum, err, reqs)
	summarize(log, cfg.Federated(), sum, err, pushed)
}

// pushMetrics pushes one group per cluster to a configured Pushgateway and says how it went:
// "" (none configured), "ok" or "failed". A failed push never changes the exit status.
func pushMetrics(ctx context.Context, cfg *config.Config, log *slog.Logger, start time.Time, runID string, sum app.Summary, err error, reqs *kubecost.Counter) string {
	if cfg.PushgatewayURL == "" {
		return ""
	}
	end := time.Now()
	outcome := "ok"
	for _, c := range sum.Clusters {
		arn, _ := exporter.ParseClusterARN(c.ARN)
		cerr := clusterErr(c, err)
		noIdle := reqs.DaysWithoutIdle()
		perr := metrics.Pusher{URL: cfg.PushgatewayURL, Cluster: arn.Name, Logger: log}.Push(ctx, metrics.Run{
			Start: start, End: end, Cluster: clusterMetrics(c, cerr), Err: cerr,
			Requests: reqs.Counts(), DaysWithoutIdle: &noIdle, RunID: runID, Progressed: sum.Progressed(c),
		})
		if perr != nil {
			outcome = "failed"
		}
	}
	return outcome
}

// clusterMetrics counts one cluster's part of the run, which ended with err (clusterErr).
func clusterMetrics(c app.ClusterResult, err error) metrics.Cluster {
	written, rows, bytes := c.Written()
	m := metrics.Cluster{Plan: c.Plan, Written: written, Failed: len(c.Failed()), Rows: rows, Bytes: bytes, Planned: app.Planned(err),
		Remaining: len(c.Remaining)}
	for _, d := range c.Days {
		if d.Err == nil {
			m.Done = append(m.Done, d.Day)
		}
	}
	return m
}

// clusterErr is the run's outcome for one cluster: its own failed days or planning, else an
// error that stopped the run before it was planned (Kubecost unreachable, start-up). Another
// cluster's failure or an unmapped cluster is not this one's.
func clusterErr(c app.ClusterResult, runErr error) error {
	switch {
	case c.PlanErr != nil:
		return c.PlanErr
	case len(c.Failed()) > 0:
		return app.ErrDaysFailed
	case runErr == nil:
		return nil
	case len(c.CleanupErrs()) > 0:
		return app.ErrCleanupFailed
	case app.Stopped(runErr):
		return runErr
	}
	return nil
}

// maxSummaryLine is about what log views show of a line; the full errors are in the ERROR
// lines before it, so the summary's error gets what the counts leave.
const maxSummaryLine = 300

// errorRoom is the room left for the summary's error after attrs, time, level and message,
// as the JSON handler writes them.
func errorRoom(attrs []any) int {
	n := len(`{"time":"2006-01-02T15:04:05.999999999Z","level":"ERROR","msg":"run summary: failed","error":""}`)
	for i := 0; i+1 < len(attrs); i += 2 {
		n += len(`,"":`) + len(fmt.Sprint(attrs[i])) + len(fmt.Sprint(attrs[i+1]))
		if _, ok := attrs[i+1].(string); ok {
			n += 2
		}
	}
	return max(maxSummaryLine-n, 40)
}

// summarize writes the run's last line (CONTRACT §5): days planned, written and failed over
// every cluster, rows, bytes and duration; for a federated run also the clusters, the
// unmapped ones and the failed cluster-days ("<id>/<YYYY-MM-DD>") the next run resumes.
func summarize(log *slog.Logger, federated bool, sum app.Summary, err error, pushed string) {
	days, rows, bytes := sum.Written()
	failed := sum.Failed()
	attrs := []any{
		"days_available", sum.Available(), "days_planned", sum.Planned(),
		"days_written", days, "days_failed", len(failed),
		"rows", rows, "bytes", bytes, "duration", sum.Duration.Round(time.Millisecond).String(),
	}
	if n := sum.Lost(); n > 0 {
		attrs = append(attrs, "days_written_by_another_run", n)
	}
	if n := sum.Remaining(); n > 0 {
		// Left by the budget for the next run: not a failure.
		attrs = append(attrs, "days_remaining", n, "budget", sum.Stop)
	}
	if n := sum.CleanupsFailed(); n > 0 {
		attrs = append(attrs, "deletes_failed", n)
	}
	if federated {
		attrs = append(attrs, "clusters", len(sum.Clusters), "unmapped_clusters", len(sum.Unmapped))
		if len(sum.Unmapped) > 0 {
			attrs = append(attrs, "unmapped", listed(sum.Unmapped))
		}
		if len(failed) > 0 {
			attrs = append(attrs, "failed_cluster_days", byCluster(sum))
		}
	}
	if pushed == "failed" {
		attrs = append(attrs, "metrics_push", pushed)
	}
	if err != nil {
		log.Error("run summary: failed", append(attrs, "error", briefError(sum, federated, err, errorRoom(attrs)))...)
		return
	}
	log.Info("run summary: ok", attrs...)
}

// dayName names a failed day "<YYYY-MM-DD>", or in a fleet "<id>/<YYYY-MM-DD>".
func dayName(d app.DayResult, federated bool) string {
	name := d.Day.UTC().Format(time.DateOnly)
	if federated {
		name = d.Cluster + "/" + name
	}
	return name
}

// briefError is the summary's account of a failure: the first failed day and its reason
// (days_failed gives the count), or the error that stopped the run.
func briefError(sum app.Summary, federated bool, err error, room int) string {
	if failed := sum.Failed(); errors.Is(err, app.ErrDaysFailed) && len(failed) > 0 {
		first := dayName(failed[0], federated)
		return first + ": " + reason(failed[0].Err, room-len(first)-2)
	}
	if errors.Is(err, app.ErrUnmappedClusters) && !errors.Is(err, app.ErrCleanupFailed) {
		return "unmapped clusters (FAIL_ON_UNMAPPED_CLUSTERS)"
	}
	return reason(err, room)
}

// reason is err within n bytes: a store error's Brief (call, status and attempts, without
// the long key), else err with its middle cut (clip).
func reason(err error, n int) string {
	var b interface{ Brief() string }
	if errors.As(err, &b) {
		return clip(exporter.Redact(b.Brief()), "", n)
	}
	return clip(exporter.Redact(err.Error()), exporter.Redact(exporter.Innermost(err).Error()), n)
}

// clip shortens s to about n bytes by cutting out its middle: the start says what was being
// done, the end kept is cause (the innermost error's text) wherever it stands in s (hints
// often follow it), else the last part of s.
func clip(s, cause string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	cause = strings.Join(strings.Fields(cause), " ")
	if len(s) <= n {
		return s
	}
	const gap = " ... "
	tail := s[len(s)-n/2:]
	if cause != "" && strings.Contains(s, cause) && !strings.HasPrefix(s, cause) {
		tail = cause[:min(len(cause), n/2)]
	}
	head := max(n-len(tail)-len(gap), 0)
	// ToValidUTF8 drops the bytes of a rune cut in two at either end.
	return strings.ToValidUTF8(s[:head], "") + gap + strings.ToValidUTF8(tail, "")
}

// maxListed bounds the ids the summary line names; the ERROR and WARN lines name every one.
const maxListed = 2

// byCluster names each cluster's first failed day and how many more:
// "prod-us/2026-11-02+15".
func byCluster(sum app.Summary) string {
	var out []string
	for _, c := range sum.Clusters {
		if f := c.Failed(); len(f) > 0 {
			item := dayName(f[0], true)
			if len(f) > 1 {
				item += "+" + strconv.Itoa(len(f)-1)
			}
			out = append(out, item)
		}
	}
	return listed(out)
}

func listed(xs []string) string {
	if len(xs) <= maxListed {
		return strings.Join(xs, ",")
	}
	return strings.Join(xs[:maxListed], ",") + ",..."
}
