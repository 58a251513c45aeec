package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/report"
)

// runConfig is the run's configuration when the report runs with the
// run's own environment, else nil, which the report says in one line.
func runConfig(lookup func(string) (string, bool), log *slog.Logger) *config.Config {
	cfg, err := config.Load(lookup)
	if err != nil {
		// Usual for a report of a copied archive: one line, the reason at debug.
		log.Info("the environment is not a run's: every cluster of the archive is read, and -kubecost-retention-days (default 15) says which days Kubecost holds")
		log.Debug("why the run's configuration does not load", "error", exporter.Redact(err.Error()))
		return nil
	}
	return cfg
}

// runView fills in what the run's configuration says about the archive:
// the run's clusters, whose partitions are all a run's role may list
// (unless -cluster names others), and, unless -kubecost-retention-days is
// given, which days Kubecost holds for each. arch is the report's opened
// archive, whose AWS identity reads Kubecost's secrets.
func runView(ctx context.Context, rc *config.Report, cfg *config.Config, arch *destination.Archive, log *slog.Logger, o *report.Options) {
	if rc.Clusters == "" {
		for _, m := range cfg.Members() {
			o.Scope = append(o.Scope, cfg.Layout(m))
		}
	}
	if rc.RetentionDays == 0 {
		o.KubecostDays = kubecostDays(ctx, cfg, arch, log, o.Today)
	}
}

// kubecostDays asks Kubecost which days it holds for each cluster, with
// the run's own wiring (wire: the same client, discovery, secrets and
// availability query, but not a second opening of the archive), over the
// days the run looks back on. The report
// then calls an unarchived day "missing" exactly when the run would
// export it, whatever retention the server keeps (Kubecost 3.x keeps 91
// days by default, 2.x 15). nil when Kubecost cannot be asked.
func kubecostDays(ctx context.Context, cfg *config.Config, arch *destination.Archive, log *slog.Logger, today time.Time) map[report.ClusterRef]map[time.Time]bool {
	opts, err := wire(ctx, cfg, arch, log, &kubecost.Counter{}, Hooks{})
	if err == nil {
		var avail map[string][]exporter.DayTotal
		if avail, err = opts.Available(ctx, opts.LookBack(today), exporter.Midnight(today).AddDate(0, 0, 1)); err == nil {
			out := map[report.ClusterRef]map[time.Time]bool{}
			for _, c := range opts.Clusters {
				ref := report.ClusterRef{Account: c.Layout.Account, Region: c.Layout.Region, Name: c.Layout.Cluster}
				out[ref] = map[time.Time]bool{}
				for _, d := range avail[c.ID] {
					out[ref][exporter.Midnight(d.Day)] = true
				}
			}
			return out
		}
	}
	log.Warn("Kubecost could not be asked which days it holds; the report goes by -kubecost-retention-days", "error", exporter.Redact(err.Error()))
	return nil
}
