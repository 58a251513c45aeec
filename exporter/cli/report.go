package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/awsauth"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/report"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/s3store"
)

// reportCmd writes the HTML report of an archive in a directory or in S3.
// It only lists and reads objects.
func reportCmd(ctx context.Context, args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	env := func(k, def string) string {
		if v, ok := lookup(k); ok && v != "" {
			return v
		}
		return def
	}
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", env("OUTPUT_DIR", ""), "read the archive from this directory (default $OUTPUT_DIR)")
	bucket := fs.String("bucket", env("S3_BUCKET_NAME", ""), "read the archive from this S3 bucket (default $S3_BUCKET_NAME)")
	prefix := fs.String("prefix", env("S3_PREFIX", ""), "key prefix before account_id= (default $S3_PREFIX)")
	region := fs.String("region", env("AWS_REGION", env("AWS_DEFAULT_REGION", "")), "the bucket's region (default $AWS_REGION)")
	from := fs.String("from", "", "first day, YYYY-MM-DD (default: the oldest stored day)")
	to := fs.String("to", "", "last day, YYYY-MM-DD (default: the newest stored day)")
	clusters := fs.String("cluster", "", "comma-separated EKS cluster names (default: every cluster found)")
	backfill := fs.Int("backfill-days", atoiOr(env("BACKFILL_PERIOD_DAYS", ""), config.DefaultBackfillDays), "the exporter's BACKFILL_PERIOD_DAYS (default $BACKFILL_PERIOD_DAYS, else the exporter's default)")
	settle := fs.Int("settle-hours", atoiOr(env("SETTLE_HOURS", ""), config.DefaultSettleHours), "the exporter's SETTLE_HOURS: newer days are pending (default $SETTLE_HOURS, else the exporter's default)")
	retention := fs.Int("kubecost-retention-days", report.DefaultKubecostRetentionDays, "days Kubecost keeps: an unarchived day older than this is 'no Kubecost data', a newer one 'missing'")
	currency := fs.String("currency", "USD", "the currency of Kubecost's costs, printed with every amount")
	today := fs.String("today", "", "when the calendar is drawn, YYYY-MM-DD or RFC 3339 (default: now); for reproducible reports")
	out := fs.String("o", "report.html", "output file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK // -h asks for this text, as --help does
		}
		return ExitConfig
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "report: unexpected argument %q (the archive is given with -dir or -bucket)\n", fs.Arg(0))
		return ExitConfig
	}
	// The exporter's own bounds: a report of a window the exporter would
	// refuse would classify days no run can produce.
	switch {
	case *backfill < config.MinBackfillDays:
		fmt.Fprintf(stderr, "report: -backfill-days %d: accepted: an integer >= %d, as BACKFILL_PERIOD_DAYS\n", *backfill, config.MinBackfillDays)
		return ExitConfig
	case *settle < 0 || *settle > 720:
		fmt.Fprintf(stderr, "report: -settle-hours %d: accepted: 0-720, as SETTLE_HOURS\n", *settle)
		return ExitConfig
	case *retention < 1:
		fmt.Fprintf(stderr, "report: -kubecost-retention-days %d: accepted: an integer >= 1\n", *retention)
		return ExitConfig
	case strings.TrimSpace(*currency) == "":
		fmt.Fprintln(stderr, "report: -currency is empty")
		return ExitConfig
	}
	o := report.Options{Prefix: *prefix, Clusters: config.SplitList(*clusters), BackfillDays: *backfill,
		Settle: time.Duration(*settle) * time.Hour, KubecostRetentionDays: *retention, Currency: strings.TrimSpace(*currency)}
	var err error
	for _, d := range []struct {
		s   string
		dst *time.Time
	}{{*from, &o.From}, {*to, &o.To}} {
		if d.s == "" {
			continue
		}
		if *d.dst, err = time.Parse(time.DateOnly, d.s); err != nil {
			fmt.Fprintf(stderr, "report: %q is not a YYYY-MM-DD day\n", d.s)
			return ExitConfig
		}
	}
	if o.Today, err = parseToday(*today); err != nil {
		fmt.Fprintf(stderr, "report: -today %q: accepted: YYYY-MM-DD or RFC 3339 (2026-11-21T10:00:00Z)\n", *today)
		return ExitConfig
	}
	if !o.From.IsZero() && !o.To.IsZero() && o.To.Before(o.From) {
		fmt.Fprintln(stderr, "report: -to is before -from")
		return ExitConfig
	}
	if (*dir == "") == (*bucket == "") {
		fmt.Fprintln(stderr, "report: give exactly one of -dir or -bucket")
		return ExitConfig
	}
	// The directory store creates its root, which a read-only command
	// must not do: a typo would give an empty report and exit 0.
	if *dir != "" {
		if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "report: -dir %s: no such directory\n", *dir)
			return ExitRuntime
		}
	}
	log := newLogger(stderr, env("LOG_FORMAT", "auto"), env("LOG_LEVEL", "info"))
	if *dir != "" {
		o.Store, err = dirstore.New(*dir, dirstore.Options{Logger: log})
	} else {
		o.Store, err = s3Reader(ctx, *bucket, *region, lookup)
	}
	if err != nil {
		fmt.Fprintf(stderr, "report: %v\n", err)
		return ExitRuntime
	}
	o.Logger = log
	d, err := report.Collect(ctx, o)
	if errors.Is(err, report.ErrEmpty) {
		where := cmp.Or(*dir, "s3://"+*bucket+"/"+*prefix)
		fmt.Fprintf(stderr, "report: %v under %s\n", err, where)
		return ExitRuntime
	}
	if err != nil {
		fmt.Fprintf(stderr, "report: %v\n", err)
		return ExitRuntime
	}
	if err := writeReport(*out, d); err != nil {
		fmt.Fprintf(stderr, "report: %v\n", err)
		return ExitRuntime
	}
	abs, _ := filepath.Abs(*out)
	fmt.Fprintf(stdout, "report: %d files, %d rows, %d clusters -> %s\n", d.Files, d.Rows, len(d.Clusters), abs)
	return ExitOK
}

// s3Reader opens the bucket with the exporter's credential chain (IRSA,
// then IRSA_PARENT_IAM_ROLE_ARN when set).
func s3Reader(ctx context.Context, bucket, region string, lookup func(string) (string, bool)) (exporter.ObjectStore, error) {
	if region == "" {
		return nil, fmt.Errorf("-region (or AWS_REGION) is required with -bucket")
	}
	parent, _ := lookup("IRSA_PARENT_IAM_ROLE_ARN")
	owner, _ := lookup("S3_EXPECTED_BUCKET_OWNER")
	if owner == "disabled" {
		owner = ""
	}
	id, err := awsauth.Load(ctx, awsauth.Input{Region: region, ParentRoleARN: parent, ClusterName: "report", Lookup: lookup})
	if err != nil {
		return nil, err
	}
	return s3store.New(s3store.NewClient(id.Config), s3store.Options{Bucket: bucket, ExpectedBucketOwner: owner})
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

// parseToday reads -today: a day (its midnight) or an instant.
func parseToday(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}
