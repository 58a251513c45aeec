package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
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
	backfill := fs.Int("backfill-days", atoiOr(env("BACKFILL_PERIOD_DAYS", ""), 15), "the exporter's BACKFILL_PERIOD_DAYS, which separates missing days from days outside retention")
	today := fs.String("today", "", "the day the calendar counts from, YYYY-MM-DD (default: today); for reproducible reports")
	out := fs.String("o", "report.html", "output file")
	if err := fs.Parse(args); err != nil {
		return ExitConfig
	}
	o := report.Options{Prefix: *prefix, Clusters: config.SplitList(*clusters), BackfillDays: *backfill}
	var err error
	for _, d := range []struct {
		s   string
		dst *time.Time
	}{{*from, &o.From}, {*to, &o.To}, {*today, &o.Today}} {
		if d.s == "" {
			continue
		}
		if *d.dst, err = time.Parse(time.DateOnly, d.s); err != nil {
			fmt.Fprintf(stderr, "report: %q is not a YYYY-MM-DD day\n", d.s)
			return ExitConfig
		}
	}
	if !o.From.IsZero() && !o.To.IsZero() && o.To.Before(o.From) {
		fmt.Fprintln(stderr, "report: -to is before -from")
		return ExitConfig
	}
	if (*dir == "") == (*bucket == "") {
		fmt.Fprintln(stderr, "report: give exactly one of -dir or -bucket")
		return ExitConfig
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
// opens half a page.
func writeReport(path string, d *report.Data) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.html")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := report.Render(tmp, d); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}
