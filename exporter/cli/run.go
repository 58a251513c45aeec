package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/awsauth"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/metrics"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/parquetout"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Hooks lets the end-to-end tests and the benchmark fix the clock, so the simulator and the
// plan agree on which days exist; run passes none.
type Hooks struct {
	Now func() time.Time
	// WallClock dates the clean-up of abandoned uploads (app.Options); fault tests move it on.
	WallClock func() time.Time
	// Candidates replaces kubecost.Candidates: tests cannot resolve the cluster DNS names.
	Candidates func(namespace, release string) []kubecost.Candidate
}

// RunWith is the `run` subcommand with injectable hooks. One cluster and a federated Kubecost
// take the same path; whatever happens, the run's last line is its summary.
func RunWith(ctx context.Context, lookup func(string) (string, bool), stderr io.Writer, h Hooks) (code int) {
	start := time.Now()
	cfg, err := config.Load(lookup)
	if err != nil {
		fmt.Fprintf(stderr, "configuration error: %s\n", exporter.Redact(err.Error()))
		pushConfigError(ctx, lookup, stderr, start, err)
		return ExitConfig
	}
	log := newLogger(stderr, cfg.LogFormat, cfg.LogLevel)
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	runID := metrics.RunID(lookup, start)
	reqs := &kubecost.Counter{}
	sum := app.Summary{Clusters: clusterResults(cfg)}
	// A panic still ends with a summary, after the stack is logged.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v", p)
			log.Error("run failed", "error", err.Error(), "stack", string(debug.Stack()))
			finish(ctx, cfg, log, start, runID, sum, err, reqs)
			code = ExitRuntime
		}
	}()
	// AWS is touched only when needed, so OUTPUT_DIR runs work without credentials.
	home := cfg.Home()
	arch, err := destination.Open(ctx, &cfg.Settings, destination.Env{
		Lookup: lookup, Session: home.Name, Home: home.Account, AWS: cfg.SecretsInAWS(), Logger: log,
	})
	var opts app.Options
	if err == nil {
		opts, err = wire(ctx, cfg, arch, log, reqs, h)
	}
	if err != nil {
		log.Error("cannot start", "error", err.Error())
	} else {
		log.Info("starting export", startAttrs(cfg)...)
		opts.Now, opts.WallClock = h.Now, h.WallClock
		sum, err = app.Run(ctx, opts)
		if app.Stopped(err) {
			log.Error("run failed", "error", err.Error())
		}
	}
	finish(ctx, cfg, log, start, runID, sum, err, reqs)
	if err != nil {
		return ExitRuntime
	}
	return ExitOK
}

// pushConfigError reports a configuration error as a failed run of each cluster the
// environment still names when PUSHGATEWAY_URL is valid, so the alerts see it. Only a failed
// push prints, after the one configuration line.
func pushConfigError(ctx context.Context, lookup func(string) (string, bool), stderr io.Writer, start time.Time, err error) {
	raw, _ := lookup("PUSHGATEWAY_URL")
	u, perr := metrics.ParseURL(raw)
	if raw == "" || perr != nil {
		return
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// No client was built: request counts are zero, days without idle uncounted.
	r := metrics.Run{Start: start, End: time.Now(), Err: err, RunID: metrics.RunID(lookup, start), Requests: new(kubecost.Counter).Counts()}
	for _, name := range config.NamedClusters(lookup) {
		_ = metrics.Pusher{URL: u, Cluster: name, Logger: log}.Push(ctx, r)
	}
}

// clusterResults is the run's clusters as a run that cannot start reports them.
func clusterResults(cfg *config.Config) []app.ClusterResult {
	var out []app.ClusterResult
	for _, m := range cfg.Members() {
		out = append(out, app.ClusterResult{ID: m.ID, ARN: m.ARN})
	}
	return out
}

// wire builds a run from a validated config and its opened archive: every member with its
// own projection (eksClusterName and clusterid from its ARN), keys and fingerprint, all
// sharing one store, one Kubecost client and one availability query.
func wire(ctx context.Context, cfg *config.Config, arch *destination.Archive, log *slog.Logger, obs kubecost.Observer, h Hooks) (app.Options, error) {
	members := cfg.Members()
	// The client projects the rows of a query without a cluster filter: a single cluster's.
	clientProj := schema.NewProjection("", "", cfg.LabelKeys(), cfg.AnnotationKeys())
	if !cfg.Federated() {
		clientProj = schema.NewProjection(members[0].ARN, members[0].Name, cfg.LabelKeys(), cfg.AnnotationKeys())
	}
	tlsCfg, token, err := kubecostAuth(ctx, cfg, arch.AWS)
	if err == nil {
		err = discover(ctx, cfg, tlsCfg, token, log, h)
	}
	if err != nil {
		return app.Options{}, err
	}
	client, err := kubecost.New(kubecost.Options{
		URL: cfg.AllocationURL(), Aggregate: cfg.AggregateParam(), Step: cfg.Step(),
		Flavor:   kubecost.Flavor(cfg.KubecostAPIFlavor),
		Paginate: bool(cfg.Paginate), Retries: cfg.Retries, MaxValueBytes: cfg.MaxValueBytes,
		ConnectTimeout: cfg.ConnectionTimeout.Duration(), ReadTimeout: cfg.ReadTimeout.Duration(),
		TLS: tlsCfg, BearerToken: token, Headers: cfg.Headers(), Projection: clientProj, Logger: log, Observer: obs,
		ClusterFilter: kubecost.ClusterFilter(cfg.ClusterFilter),
	})
	if err != nil {
		return app.Options{}, err
	}
	codec := exporter.Codec(cfg.Compression)
	o := app.Options{
		Store: arch.Store, Codec: codec, FailOnUnmapped: bool(cfg.FailOnUnmapped),
		BackfillDays: cfg.BackfillPeriodDays, Settle: cfg.Settle(), Concurrency: cfg.Concurrency,
		ForceDays: cfg.ForceDays(), DryRun: bool(cfg.DryRun), Logger: log,
		Backlog: exporter.Backlog{MaxDays: cfg.BackfillMaxDays, AllAvailable: bool(cfg.BackfillAllAvailable)},
		Budget:  app.Budget{Time: time.Duration(cfg.RunBudget), ClusterDays: cfg.MaxClusterDaysPerRun},
		Reexport: app.Reexport{
			OnConfigChange: bool(cfg.ReexportOnConfigChange),
			DriftTolerance: float64(cfg.DriftTolerance), Legacy: bool(cfg.ReexportLegacy),
		},
	}
	// CLUSTER_ID's cluster is asked without a cluster filter, as CCA asks, so its queries and
	// files stay CCA's; a map's clusters are asked one by one with their id's filter, and one
	// query answers the availability of them all.
	o.Available = app.SourceDays(client)
	if cfg.Federated() {
		o.Available = client.ClusterDays
	}
	for _, m := range members {
		c := app.Cluster{
			ID: m.ID, ARN: m.ARN, Source: client, Projection: clientProj,
			Layout:      cfg.Layout(m),
			Fingerprint: fingerprint(cfg, client, m.ARN),
			Metadata:    map[string]string{"cluster": m.ARN, "granularity": cfg.Granularity, "aggregation": cfg.Aggregation},
		}
		if cfg.Federated() { // the query, as above, and the lines that name the cluster
			c.Projection = schema.NewProjection(m.ARN, m.Name, cfg.LabelKeys(), cfg.AnnotationKeys())
			c.Source = client.ForCluster(m.ID, c.Projection)
			c.Logger = log.With("cluster", m.ID)
		}
		proj := c.Projection
		c.NewEncoder = func(w io.Writer) (app.Encoder, error) {
			return parquetout.NewWriter(w, proj, parquetout.Options{Codec: codec})
		}
		o.Clusters = append(o.Clusters, c)
	}
	return o, nil
}

// startAttrs are the fields of the run's first line: a single cluster is named by its ARN, a
// fleet by its "<id>=<name>" pairs and its cluster filter.
func startAttrs(cfg *config.Config) []any {
	members := cfg.Members()
	attrs := []any{"version", exporter.Version}
	if cfg.Federated() {
		var names []string
		for _, m := range members {
			names = append(names, m.ID+"="+m.Name)
		}
		attrs = append(attrs, "clusters", names, "cluster_filter", cfg.ClusterFilter)
	} else {
		attrs = append(attrs, "cluster", members[0].ARN)
	}
	attrs = append(attrs, "kubecost", exporter.Redact(cfg.AllocationURL()), "aggregate", cfg.AggregateParam(), "granularity", cfg.Granularity,
		"destination", cfg.Name())
	if !cfg.IsDir() {
		attrs = append(attrs, "bucket_owner", cfg.BucketOwner())
	}
	return append(attrs, "codec", exporter.Codec(cfg.Compression), "labels", cfg.LabelKeys(), "annotations", cfg.AnnotationKeys(),
		"settings", cfg.Sources())
}

// fingerprint is a cluster's config fingerprint: what in cfg changes its files' bytes or meaning.
func fingerprint(cfg *config.Config, src *kubecost.Client, clusterARN string) string {
	return exporter.Fingerprint(exporter.FingerprintInput{
		ClusterID: clusterARN, Labels: cfg.LabelKeys(), Annotations: cfg.AnnotationKeys(),
		Aggregation: cfg.Aggregation, Granularity: cfg.Granularity,
		Query: src.DayQuery(), Codec: exporter.Codec(cfg.Compression),
	})
}

// kubecostAuth resolves the Kubecost TLS config and bearer token, secrets through id (set
// whenever one is configured). The CA bundle stays in memory, for the Kubecost client only.
func kubecostAuth(ctx context.Context, cfg *config.Config, id *awsauth.Identity) (tlsCfg *tls.Config, token string, err error) {
	region := cfg.SecretsRegion(cfg.CASecretRegion)
	if cfg.CASecretName != "" || !bool(cfg.TLSVerify) {
		var bundle string
		if cfg.CASecretName != "" {
			if bundle, err = awsauth.FetchSecret(ctx, id.Config, region, cfg.CASecretName); err != nil {
				return nil, "", err
			}
		}
		if tlsCfg, err = kubecost.TLSConfig([]byte(bundle), bool(cfg.TLSVerify)); err != nil {
			return nil, "", fmt.Errorf("%w (secret %s)", err, cfg.CASecretName)
		}
	}
	switch {
	case cfg.BearerFile != "":
		token, err = kubecost.BearerTokenFile(cfg.BearerFile)
	case cfg.BearerSecret != "":
		var raw string
		if raw, err = awsauth.FetchSecret(ctx, id.Config, region, cfg.BearerSecret); err == nil {
			token, err = kubecost.ParseBearerToken(raw, "secret "+cfg.BearerSecret)
		}
	}
	return tlsCfg, token, err
}

// discover finds Kubecost when KUBECOST_API_ENDPOINT is unset, with the run's TLS,
// credentials and time limits, and sets cfg's endpoint to the base URL that answered, so that
// the client and the start line see one endpoint.
func discover(ctx context.Context, cfg *config.Config, tlsCfg *tls.Config, token string, log *slog.Logger, h Hooks) error {
	if !cfg.Discovering() {
		return nil
	}
	candidates := kubecost.Candidates
	if h.Candidates != nil {
		candidates = h.Candidates
	}
	cands := candidates(cfg.KubecostNamespace, cfg.KubecostRelease)
	base, err := kubecost.Discover(ctx, cands, kubecost.DiscoverOptions{
		Path: cfg.AllocationPath(), TLS: tlsCfg, Headers: cfg.Headers(), BearerToken: token,
		ConnectTimeout: cfg.ConnectionTimeout.Duration(), ReadTimeout: cfg.ReadTimeout.Duration(),
		Logger: log, Now: h.Now,
	})
	if err != nil {
		return err
	}
	cfg.KubecostAPIEndpoint = base
	return nil
}
