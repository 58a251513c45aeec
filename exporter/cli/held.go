package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
)

// kubecostDays asks Kubecost which days it holds for each cluster, with
// the run's own settings and wiring (wire: the same client, discovery,
// credentials and availability query), over the days the run reaches
// back to. The report then calls an unarchived day "missing" exactly when
// the run would export it, whatever retention the server keeps (Kubecost
// 3.x keeps 91 days by default, 2.x 15). nil when the environment is not
// a run's, or Kubecost cannot be asked: the report then goes by
// -kubecost-retention-days' default, and says so.
func kubecostDays(ctx context.Context, lookup func(string) (string, bool), log *slog.Logger, today time.Time) map[string]map[time.Time]bool {
	cfg, err := config.Load(lookup)
	if err != nil {
		log.Info("Kubecost not asked which days it holds: the environment is not the run's; set -kubecost-retention-days", "error", exporter.Redact(err.Error()))
		return nil
	}
	opts, err := wire(ctx, cfg, lookup, log, &kubecost.Counter{}, Hooks{})
	if err == nil {
		var avail map[string][]exporter.DayTotal
		if avail, err = opts.Available(ctx, opts.LookBack(today), exporter.Midnight(today).AddDate(0, 0, 1)); err == nil {
			out := map[string]map[time.Time]bool{}
			for _, c := range opts.Clusters {
				out[c.Layout.Cluster] = map[time.Time]bool{}
				for _, d := range avail[c.ID] {
					out[c.Layout.Cluster][exporter.Midnight(d.Day)] = true
				}
			}
			return out
		}
	}
	log.Warn("Kubecost could not be asked which days it holds; the report goes by -kubecost-retention-days", "error", exporter.Redact(err.Error()))
	return nil
}
