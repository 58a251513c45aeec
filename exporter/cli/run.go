package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/awsauth"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/metrics"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/parquetout"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/s3store"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Hooks lets the end-to-end tests and the benchmark fix the clock, so the
// simulator and the plan agree on which days exist; run passes none.
type Hooks struct {
	Now func() time.Time
	// WallClock dates the clean-up of abandoned uploads (see app.Options);
	// the fault tests move it an hour on instead of waiting.
	WallClock func() time.Time
}

// timeoutSetting is the variable that bounds AWS calls, named in errors.
const timeoutSetting = "S3_REQUEST_TIMEOUT"

func run(ctx context.Context, lookup func(string) (string, bool), _, stderr io.Writer) int {
	return RunWith(ctx, lookup, stderr, Hooks{})
}

// RunWith is the `run` subcommand with injectable hooks.
func RunWith(ctx context.Context, lookup func(string) (string, bool), stderr io.Writer, h Hooks) int {
	start := time.Now()
	cfg, err := config.Load(lookup)
	if err != nil {
		fmt.Fprintf(stderr, "configuration error: %s\n", exporter.RedactText(err.Error()))
		pushConfigError(ctx, lookup, stderr, start, err)
		return ExitConfig
	}
	log := newLogger(stderr, cfg.LogFormat, cfg.LogLevel)
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	if h.Now == nil {
		h.Now = time.Now
	}
	if cfg.Federated() {
		return runFleet(ctx, cfg, lookup, log, h, start)
	}
	reqs := &metrics.Requests{}
	opts, err := wire(ctx, cfg, lookup, log, reqs)
	if err != nil {
		log.Error("cannot start", "error", err.Error())
		sum := app.Summary{Duration: time.Since(start)}
		summarize(log, sum, err)
		pushMetrics(ctx, cfg, lookup, log, metrics.Run{Start: start, End: time.Now(), Summary: sum, Err: err})
		return ExitRuntime
	}
	opts.Now, opts.WallClock = h.Now, h.WallClock
	sum, err := app.Run(ctx, opts)
	sum.Duration = time.Since(start)
	if err != nil && !errors.Is(err, app.ErrDaysFailed) {
		log.Error("run failed", "error", err.Error())
	}
	summarize(log, sum, err)
	pushMetrics(ctx, cfg, lookup, log, metrics.Run{Start: start, End: time.Now(), Summary: sum, Err: err, Requests: reqs})
	if err != nil {
		return ExitRuntime
	}
	return ExitOK
}

// pushMetrics reports the run to the Pushgateway when one is configured.
// A failed push is logged by the pusher and never changes the exit status.
func pushMetrics(ctx context.Context, cfg *config.Config, lookup func(string) (string, bool), log *slog.Logger, r metrics.Run) {
	if cfg.PushgatewayURL == "" {
		return
	}
	r.RunID = metrics.RunID(lookup, r.Start)
	_ = metrics.Pusher{URL: cfg.PushgatewayURL, Cluster: cfg.Cluster().Name, Logger: log}.Push(ctx, r)
}

// pushConfigError reports a configuration error (exit 2) as a failed run
// when PUSHGATEWAY_URL itself is valid, so the alerts see it; the groups
// are those of the clusters the environment still names. Only a failed
// push prints, after the one configuration line.
func pushConfigError(ctx context.Context, lookup func(string) (string, bool), stderr io.Writer, start time.Time, err error) {
	raw, _ := lookup("PUSHGATEWAY_URL")
	u, perr := metrics.ParseURL(raw)
	if raw == "" || perr != nil {
		return
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	r := metrics.Run{Start: start, End: time.Now(), Err: err, RunID: metrics.RunID(lookup, start)}
	for _, name := range metrics.ConfigErrorClusters(lookup) {
		_ = metrics.Pusher{URL: u, Cluster: name, Logger: log}.Push(ctx, r)
	}
}

// summarize writes the run's last line (CONTRACT §5). It stays short (at
// most about 300 characters): counts and one sentence on what went wrong.
// The full errors are in the ERROR lines before it.
func summarize(log *slog.Logger, sum app.Summary, err error) {
	days, rows, bytes := sum.Written()
	attrs := []any{
		"days_available", len(sum.Plan.Available), "days_planned", len(sum.Plan.Exports()),
		"days_written", days, "days_failed", len(sum.Failed()),
		"rows", rows, "bytes", bytes, "duration", sum.Duration.Round(time.Millisecond).String(),
	}
	if n := sum.Lost(); n > 0 {
		attrs = append(attrs, "days_written_by_another_run", n)
	}
	if err != nil {
		log.Error("run summary: failed", append(attrs, "error", briefError(sum, err))...)
		return
	}
	log.Info("run summary: ok", attrs...)
}

// briefError is the summary's account of a failure: the first failed
// day and a short reason.
func briefError(sum app.Summary, err error) string {
	if failed := sum.Failed(); errors.Is(err, app.ErrDaysFailed) && len(failed) > 0 {
		// days_failed gives the count; the first failure stands for all.
		return day(failed[0].Day) + ": " + reason(failed[0].Err)
	}
	return reason(err)
}

// reason is the short form of err: a store error's own brief message (the
// failing call, status and attempts, without the long key), else err.
func reason(err error) string {
	var b interface{ Brief() string }
	if errors.As(err, &b) {
		return exporter.RedactText(b.Brief()) // short by construction
	}
	return clip(exporter.RedactText(err.Error()), maxReason)
}

// maxReason keeps the summary line near 300 characters with its counts.
const maxReason = 80

// clip shortens s to n bytes by cutting out its middle: the start says
// what was being done, the end is usually the root cause.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	head := n / 3
	return s[:head] + " ... " + s[len(s)-(n-head-5):]
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// parts are what a single-cluster and a federated run share: the store
// and the Kubecost client.
type parts struct {
	store  exporter.ObjectStore
	dest   string
	client *kubecost.Client
	codec  exporter.Codec
}

// wireParts builds the store and the Kubecost client from a validated
// config; proj completes the client's own rows. AWS is touched only when
// something needs it, so OUTPUT_DIR runs work without credentials.
func wireParts(ctx context.Context, cfg *config.Config, lookup func(string) (string, bool), log *slog.Logger, obs kubecost.Observer, proj *schema.Projection) (parts, error) {
	home := cfg.Home()
	var id *awsauth.Identity
	if cfg.OutputDir == "" || cfg.CASecretName != "" || cfg.BearerSecret != "" {
		var err error
		id, err = awsauth.Load(ctx, awsauth.Input{
			Region: home.Region, ParentRoleARN: cfg.IRSAParentRoleARN, ClusterName: home.Name,
			Lookup: lookup, Logger: log,
			RequestTimeout: cfg.S3RequestTimeout.Duration(), RequestTimeoutSetting: timeoutSetting,
		})
		if err != nil {
			return parts{}, err
		}
	}
	tlsCfg, token, err := kubecostAuth(ctx, cfg, id)
	if err != nil {
		return parts{}, err
	}
	p := parts{codec: exporter.Codec(cfg.Compression)}
	if cfg.OutputDir != "" {
		p.store, err = dirstore.New(cfg.OutputDir, dirstore.Options{Logger: log})
		p.dest = "dir " + cfg.OutputDir
	} else {
		p.store, err = s3store.New(s3store.NewClient(id.Config), s3store.Options{
			Bucket: cfg.S3BucketName, ExpectedBucketOwner: cfg.BucketOwner(),
			SSE: cfg.SSE, SSEKMSKeyID: cfg.SSEKMSKeyID, Logger: log,
			RequestTimeout: cfg.S3RequestTimeout.Duration(), TimeoutSetting: timeoutSetting,
			PartSize: int64(cfg.S3PartSizeMiB) << 20,
		})
		p.dest = "s3://" + cfg.S3BucketName + "/" + cfg.S3Prefix
	}
	if err != nil {
		return parts{}, err
	}
	p.client, err = kubecost.New(kubecost.Options{
		URL: cfg.AllocationURL(), Aggregate: cfg.AggregateParam(), Step: cfg.Step(),
		Flavor:   kubecost.Flavor(cfg.KubecostAPIFlavor),
		Paginate: bool(cfg.Paginate), Retries: cfg.Retries,
		ConnectTimeout: cfg.ConnectionTimeout.Duration(), ReadTimeout: cfg.ReadTimeout.Duration(),
		TLS: tlsCfg, BearerToken: token, Projection: proj, Logger: log, Observer: obs,
		ClusterFilter: kubecost.ClusterFilter(cfg.ClusterFilter),
	})
	return p, err
}

// wire builds a single-cluster run from a validated config.
func wire(ctx context.Context, cfg *config.Config, lookup func(string) (string, bool), log *slog.Logger, obs kubecost.Observer) (app.Options, error) {
	cl := cfg.Cluster()
	proj := schema.NewProjection(cl.ARN, cl.Name, cfg.LabelKeys(), cfg.AnnotationKeys())
	p, err := wireParts(ctx, cfg, lookup, log, obs, proj)
	if err != nil {
		return app.Options{}, err
	}
	layout := exporter.Layout{Prefix: cfg.S3Prefix, Account: cl.Account, Region: cl.Region, Cluster: cl.Name}
	log.Info("starting export",
		"version", exporter.Version, "cluster", cl.ARN, "kubecost", exporter.RedactURL(cfg.AllocationURL()),
		"aggregate", cfg.AggregateParam(), "granularity", cfg.Granularity, "destination", p.dest,
		"bucket_owner", cfg.BucketOwner(), "codec", p.codec, "labels", cfg.LabelKeys(), "annotations", cfg.AnnotationKeys())
	o := sharedOptions(cfg, p, log)
	o.Source, o.Layout, o.Projection = p.client, layout, proj
	o.NewEncoder = encoders(proj, p.codec)
	o.Reexport = reexport(cfg, p.client, cl.ARN)
	o.Metadata = metadata(cfg, cl.ARN)
	return o, nil
}

// sharedOptions are the Options every cluster of a run has in common.
func sharedOptions(cfg *config.Config, p parts, log *slog.Logger) app.Options {
	return app.Options{
		Store: p.store, Codec: p.codec,
		BackfillDays: cfg.BackfillPeriodDays, Settle: cfg.Settle(), Concurrency: cfg.Concurrency,
		ForceDays: cfg.ForceDays(), DryRun: bool(cfg.DryRun), Logger: log,
	}
}

func encoders(proj *schema.Projection, codec exporter.Codec) app.EncoderFactory {
	return func(w io.Writer) (app.Encoder, error) {
		return parquetout.NewWriter(w, proj, parquetout.Options{Codec: codec})
	}
}

func metadata(cfg *config.Config, arn string) map[string]string {
	return map[string]string{"cluster": arn, "granularity": cfg.Granularity, "aggregation": cfg.Aggregation}
}

// reexport is the re-export policy, with the fingerprint of everything in
// cfg that changes a file's bytes or meaning.
func reexport(cfg *config.Config, src *kubecost.Client, clusterARN string) app.Reexport {
	fp := exporter.Fingerprint(exporter.FingerprintInput{
		ClusterID: clusterARN, Labels: cfg.LabelKeys(), Annotations: cfg.AnnotationKeys(),
		Aggregation: cfg.Aggregation, Granularity: cfg.Granularity,
		Query: src.DayQuery(), Codec: exporter.Codec(cfg.Compression),
	})
	return app.Reexport{
		Fingerprint: fp, OnConfigChange: bool(cfg.ReexportOnConfigChange),
		DriftTolerance: float64(cfg.DriftTolerance), Legacy: bool(cfg.ReexportLegacy),
	}
}

// kubecostAuth resolves the Kubecost TLS config and bearer token; the
// secrets come from Secrets Manager through id (set whenever a secret is
// configured). The CA bundle stays in memory and is used only by the
// Kubecost client.
func kubecostAuth(ctx context.Context, cfg *config.Config, id *awsauth.Identity) (*tls.Config, string, error) {
	var tlsCfg *tls.Config
	if cfg.CASecretName != "" || !bool(cfg.TLSVerify) {
		var bundle string
		if cfg.CASecretName != "" {
			var err error
			if bundle, err = awsauth.FetchSecret(ctx, id.Config, cfg.SecretRegion(), cfg.CASecretName); err != nil {
				return nil, "", err
			}
		}
		var err error
		if tlsCfg, err = kubecost.TLSConfig([]byte(bundle), bool(cfg.TLSVerify)); err != nil {
			return nil, "", fmt.Errorf("%w (secret %s)", err, cfg.CASecretName)
		}
	}
	switch {
	case cfg.BearerFile != "":
		token, err := kubecost.BearerTokenFile(cfg.BearerFile)
		return tlsCfg, token, err
	case cfg.BearerSecret != "":
		raw, err := awsauth.FetchSecret(ctx, id.Config, cfg.SecretRegion(), cfg.BearerSecret)
		if err != nil {
			return nil, "", err
		}
		token, err := kubecost.ParseBearerToken(raw, "secret "+cfg.BearerSecret)
		return tlsCfg, token, err
	}
	return tlsCfg, "", nil
}
