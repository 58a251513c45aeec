package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/report"
)

// reportCmd writes the HTML report of an archive in a directory or in S3, only listing and
// reading objects.
func reportCmd(ctx context.Context, args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	rc, err := config.LoadReport(args, lookup, stderr)
	if err != nil {
		return configError(stderr, "report", err)
	}
	log := newLogger(stderr, rc.LogFormat, rc.LogLevel)
	o := report.Options{Prefix: rc.S3Prefix, Clusters: config.SplitList(rc.Clusters), From: rc.FromDay, To: rc.ToDay,
		Today: rc.TodayTime, BackfillDays: rc.BackfillPeriodDays, Settle: rc.Settle(),
		KubecostRetentionDays: rc.RetentionDays, Currency: rc.Currency, Logger: log}
	run := runConfig(lookup, log)
	if run != nil {
		// The report's flags win over the run's variables (-prefix scopes the run's clusters).
		run.Settings = rc.Settings
	}
	arch, err := destination.Open(ctx, &rc.Settings, destination.Env{
		Lookup: lookup, Session: "report", ReadOnly: true, Logger: log,
		AWS: run != nil && run.SecretsInAWS(),
	})
	if err != nil {
		fmt.Fprintf(stderr, "report: %v\n", err)
		return ExitRuntime
	}
	o.Store = arch.Store
	for _, w := range rc.Bill.Warnings() {
		log.Warn(w)
	}
	if b := rc.Bill.Dest; b != nil {
		// Read-only, with the archive's identity unless BILL_ROLE_ARN names its own.
		bill, err := destination.Open(ctx, b, destination.Env{Lookup: lookup, Session: "report", ReadOnly: true, Logger: log, Shared: arch.AWS})
		if err != nil {
			fmt.Fprintf(stderr, "report: the bill at %s: %v\n", rc.Bill.Source(), err)
			return ExitRuntime
		}
		o.Bill = &report.Bill{Store: bill.Store, Prefix: b.S3Prefix, Source: rc.Bill.Source()}
	}
	o.Today = cmp.Or(o.Today, time.Now())
	if run != nil {
		runView(ctx, rc, run, arch, log, &o)
	}
	d, err := report.Collect(ctx, o)
	if errors.Is(err, report.ErrEmpty) {
		err = fmt.Errorf("%w under %s", err, rc.Name())
	}
	if err == nil {
		err = writeReport(rc.Out, d)
	}
	if err != nil {
		fmt.Fprintf(stderr, "report: %v\n", err)
		return ExitRuntime
	}
	abs, _ := filepath.Abs(rc.Out)
	fmt.Fprintf(stdout, "report: %d files, %d rows, %d clusters -> %s\n", d.Files, d.Rows, len(d.Clusters), abs)
	if d.Bill != nil {
		report.WriteBillText(stdout, d.Bill, d.Currency)
	}
	return ExitOK
}

// configError reports a subcommand's configuration error as the run does (CONTRACT §5: one
// line, exit 2); -h is help, not an error.
func configError(stderr io.Writer, command string, err error) int {
	if config.IsHelp(err) {
		return ExitOK
	}
	var fe exporter.FieldErrors
	var one *exporter.FieldError
	if errors.As(err, &fe) || errors.As(err, &one) {
		fmt.Fprintf(stderr, "%s: configuration error: %s\n", command, exporter.Redact(err.Error()))
	} // else the flag package has printed its own line and the usage
	return ExitConfig
}

// writeReport writes to a temp file and renames it, so a reader never opens half a page.
// Errors name path, not the temp file.
func writeReport(path string, d *report.Data) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.html")
	if err == nil {
		defer os.Remove(tmp.Name())
		if err = report.Render(tmp, d); err == nil {
			err = tmp.Chmod(0o644)
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, pathErr(err))
	}
	return nil
}

// pathErr drops the temp file's name from an *os.PathError or *os.LinkError, keeping the cause.
func pathErr(err error) error {
	if pe := (*os.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	if le := (*os.LinkError)(nil); errors.As(err, &le) {
		return le.Err
	}
	return err
}

// runConfig is the run's configuration when the report runs in the run's environment, else nil.
func runConfig(lookup func(string) (string, bool), log *slog.Logger) *config.Config {
	cfg, err := config.Load(lookup)
	if err != nil {
		// Usual for a copied archive: one line, the reason at debug.
		log.Info("the environment is not a run's: every cluster of the archive is read, and -kubecost-retention-days (default 15) says which days Kubecost holds")
		log.Debug("why the run's configuration does not load", "error", exporter.Redact(err.Error()))
		return nil
	}
	return cfg
}

// runView fills in what the run's configuration says: the run's clusters, whose partitions
// are all a run's role may list (unless -cluster names others), and, unless
// -kubecost-retention-days is given, which days Kubecost holds for each. arch's AWS identity
// reads Kubecost's secrets.
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

// kubecostDays asks Kubecost which days it holds for each cluster over the run's look-back,
// with the run's wiring (wire, without reopening the archive), so that an unarchived day is
// "missing" exactly when the run would export it, whatever the server's retention (Kubecost
// 3.x: 91 days by default, 2.x: 15). nil when Kubecost cannot be asked.
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
