package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/report"
)

// reportCmd writes the HTML report of an archive in a directory or in S3.
// It only lists and reads objects. Its settings go through the run's
// configuration path (config.LoadReport): a bad flag or variable exits 2
// with one line naming it.
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
		// The archive is the report's: its flags win over the run's
		// variables (-prefix scopes the run's clusters, -bucket, -region).
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
		// The bill is opened as the archive is, read-only, with the
		// archive's identity unless BILL_ROLE_ARN names its own.
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

// configError reports a subcommand's configuration error as the run does
// (CONTRACT §5: one line, exit 2); -h is help, not an error.
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

// writeReport writes to a temp file and renames it, so a reader never
// opens half a page. Errors name path, the file the user asked for, not
// the temp file.
func writeReport(path string, d *report.Data) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.html")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, pathErr(err))
	}
	defer os.Remove(tmp.Name())
	err = report.Render(tmp, d)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, pathErr(err))
	}
	return nil
}

// pathErr drops the temp file's name from an *os.PathError or
// *os.LinkError, keeping the cause ("no such file or directory").
func pathErr(err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
