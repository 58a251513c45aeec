// Package config reads and validates the exporter's environment (CONTRACT
// §1). Everything is parsed and checked before any network call, so a bad
// value costs the user one log line and exit status 2, not a failed day.
package config

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
)

// Config is the whole configuration: env tags are the contract's variable names; `default`
// and `desc` feed --help and the docs (docs/architecture.md: adding a variable).
type Config struct {
	// The destination's settings (S3_BUCKET_NAME, OUTPUT_DIR, ...) are its package's, as
	// every command that opens the archive reads them.
	destination.Settings

	ClusterID string `env:"CLUSTER_ID" req:"unless CLUSTER_ARNS or CLUSTER_MAP_FILE" desc:"EKS cluster ARN arn:<partition>:eks:<region>:<account>:cluster/<name>"`
	// Federated: the primary's exporter exports each mapped cluster under its own keys (clusters.go).
	ClusterARNs    string `env:"CLUSTER_ARNS" desc:"federated Kubecost: comma-separated <Kubecost cluster id>=<EKS cluster ARN> pairs, instead of CLUSTER_ID"`
	ClusterMapFile string `env:"CLUSTER_MAP_FILE" desc:"federated Kubecost: YAML or JSON file mapping each Kubecost cluster id to its EKS cluster ARN, instead of CLUSTER_ID"`
	FailOnUnmapped Flag   `env:"FAIL_ON_UNMAPPED_CLUSTERS" default:"false" desc:"federated: exit 1 when Kubecost reports clusters the map lacks (the mapped ones are still exported); default: warn and skip them"`
	ClusterFilter  string `env:"KUBECOST_CLUSTER_FILTER" default:"v2" desc:"federated: how a cluster-day query names its cluster: v2 (filter=cluster:\"<id>\", Kubecost 2.x, OpenCost) or v1 (filterClusters=<id>, Kubecost 1.x)"`

	KubecostAPIEndpoint string `env:"KUBECOST_API_ENDPOINT" desc:"Kubecost base URL; unset: found among http://<release>-frontend.<namespace>:9090 (Kubecost 3.x), then http://<release>-cost-analyzer.<namespace>:9090 (1.x/2.x)"`
	KubecostNamespace   string `env:"KUBECOST_NAMESPACE" default:"kubecost" desc:"with KUBECOST_API_ENDPOINT unset: the namespace Kubecost is installed in"`
	KubecostRelease     string `env:"KUBECOST_RELEASE" default:"kubecost" desc:"with KUBECOST_API_ENDPOINT unset: Kubecost's Helm release name"`
	KubecostAPIFlavor   string `env:"KUBECOST_API_FLAVOR" default:"kubecost" desc:"kubecost (/model/allocation), cost-model (/allocation) or opencost (/allocation/compute)"`
	KubecostAPIPath     string `env:"KUBECOST_API_PATH" desc:"overrides the allocation path implied by KUBECOST_API_FLAVOR"`
	Window
	Aggregation       string  `env:"AGGREGATION" default:"container" desc:"container, pod, namespace, controller, controllerKind, node or cluster"`
	Granularity       string  `env:"GRANULARITY" default:"daily" desc:"daily (step 1d) or hourly (step 1h); one file per day either way"`
	Paginate          Flag    `env:"KUBECOST_ALLOCATION_API_PAGINATE" default:"false" desc:"with hourly granularity, query one hour at a time (yes/no/y/n/true/false)"`
	ConnectionTimeout Seconds `env:"CONNECTION_TIMEOUT" default:"10" desc:"TCP/TLS connect timeout to Kubecost, seconds > 0"`
	ReadTimeout       Seconds `env:"KUBECOST_ALLOCATION_API_READ_TIMEOUT" default:"60" desc:"seconds to wait for Kubecost's response headers, and the longest pause allowed inside a response body, > 0 (Kubecost 3.x's frontend cuts answers itself after its frontend.timeoutSeconds, 300 s by default, with a 504)"`
	TLSVerify         Flag    `env:"TLS_VERIFY" default:"true" desc:"verify Kubecost's TLS certificate (yes/no/y/n/true/false)"`
	Retries           int     `env:"KUBECOST_MAX_RETRIES" default:"4" desc:"retries per Kubecost request on 5xx, timeouts and truncated bodies, 0-20"`
	MaxValueBytes     int     `env:"MAX_VALUE_BYTES" default:"2097152" desc:"the most bytes of one string or number in a Kubecost response, as JSON text, 4096-1073741824; a larger value fails the day (default 2 MiB: a value of 256 KiB, what Kubernetes allows for all of an object's annotations, is 1.5 MiB when every byte is written as a six-byte unicode escape)"`

	// How the first export takes every day the server holds: exporter/window.go. 400 days is above
	// any retention the Kubecost 3.x chart ships (kubecost/values.yaml, aggregator.retention1d: 91
	// at every tag v3.0.0 to v3.2.1; values-eks-cost-monitoring.yaml: 16 from v3.2.0).
	BackfillAllAvailable Flag `env:"BACKFILL_ALL_AVAILABLE" default:"false" desc:"also export every settled day Kubecost still holds within BACKFILL_MAX_DAYS that is missing, oldest first (the chart's install/upgrade export Job sets it; same as run --all-available)"`
	BackfillMaxDays      int  `env:"BACKFILL_MAX_DAYS" default:"400" desc:"how far back, in days, BACKFILL_ALL_AVAILABLE and the continuation of an unfinished backfill look, 3-3650; at most BACKFILL_PERIOD_DAYS keeps every run to its window"`

	CASecretName   string `env:"KUBECOST_CA_CERTIFICATE_SECRET_NAME" desc:"Secrets Manager secret holding a PEM CA bundle for Kubecost TLS"`
	CASecretRegion string `env:"KUBECOST_CA_CERTIFICATE_SECRET_REGION" desc:"region of that secret (default: the region of STS, AWS_REGION, else the cluster's)"`
	BearerFile     string `env:"KUBECOST_BEARER_TOKEN_FILE" desc:"file holding a bearer token for a Kubecost behind OIDC"`
	BearerSecret   string `env:"KUBECOST_BEARER_TOKEN_SECRET_NAME" desc:"Secrets Manager secret holding that bearer token"`
	HeadersFile    string `env:"KUBECOST_HTTP_HEADERS_FILE" desc:"file of 'Name: value' lines sent as headers on every Kubecost request (credentials of an SSO-enabled Kubecost, e.g. X-API-KEY); values are never logged"`

	Labels      string `env:"LABELS" desc:"comma-separated Kubernetes label keys to export as columns"`
	Annotations string `env:"ANNOTATIONS" desc:"comma-separated Kubernetes annotation keys to export as columns"`
	Compression string `env:"COMPRESSION" default:"snappy" desc:"Parquet codec: snappy, zstd or gzip"`
	Concurrency int    `env:"CONCURRENCY" default:"1" desc:"days exported at once, 1-8"`
	DryRun      Flag   `env:"DRY_RUN" default:"false" desc:"plan and log, but fetch and write nothing"`
	ForceDates  string `env:"FORCE_DATES" desc:"comma-separated YYYY-MM-DD days to export again even if present"`

	// A budget ends a long backfill cleanly (exit 0) before the pod's deadline.
	MaxClusterDaysPerRun int      `env:"MAX_CLUSTER_DAYS_PER_RUN" default:"0" desc:"the most cluster-days one run starts, 0-1000000 (0: no limit); the rest are left, oldest first, for the next run"`
	RunBudget            Duration `env:"RUN_BUDGET" default:"0" desc:"how long one run may start new days, e.g. 50m or 2h30m, at most 168h (0: no limit); days in flight finish, the rest are left for the next run"`

	ReexportOnConfigChange Flag  `env:"REEXPORT_ON_CONFIG_CHANGE" default:"true" desc:"re-export stored days of the window made with another config (labels, codec, ...)"`
	DriftTolerance         Ratio `env:"DRIFT_TOLERANCE" default:"0.1%" desc:"re-export a stored day when Kubecost's day total moved by more than this (0.1% or 0.001)"`
	ReexportLegacy         Flag  `env:"REEXPORT_LEGACY" default:"false" desc:"also replace stored days without this exporter's metadata (written by CCA or by hand)"`
	Logging

	PushgatewayURL string `env:"PUSHGATEWAY_URL" desc:"Prometheus Pushgateway base URL; each run pushes its metrics there at the end"`

	// CLUSTER_MAP_FILE and KUBECOST_HTTP_HEADERS_FILE (exporter/headers.go) as Load read
	// them, so that Validate stays free of I/O; the *Err fields say why they could not be.
	mapFile    []byte
	mapFileErr error
	headers    http.Header
	headersErr error
}

// Window is the backfill window, shared with the report (variables, defaults, windowRules) so
// that its calendar classifies days as the run plans them. Its flags are the report's.
type Window struct {
	BackfillPeriodDays int `env:"BACKFILL_PERIOD_DAYS" flag:"backfill-days" default:"15" desc:"days to look back, integer >= 3"`
	SettleHours        int `env:"SETTLE_HOURS" flag:"settle-hours" default:"48" desc:"a day is exported once it ended at least this many hours ago (CCA: 48), 0-720"`
}

// Logging is how every command that logs does so.
type Logging struct {
	LogLevel  string `env:"LOG_LEVEL" default:"info" desc:"debug, info, warn or error"`
	LogFormat string `env:"LOG_FORMAT" default:"auto" desc:"json, text, or auto (text on a terminal, else json)"`
}

// Flag is a boolean spelled yes/no/y/n/true/false in any case, as the
// Python exporter accepted.
type Flag bool

// Decode parses v.
func (f *Flag) Decode(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "yes", "y", "true":
		*f = true
	case "no", "n", "false":
		*f = false
	default:
		return errors.New("accepted: yes, no, y, n, true, false (case-insensitive)")
	}
	return nil
}

// Ratio is a relative tolerance, written as a percentage ("0.1%") or as a
// fraction ("0.001"), from 0 to 100 %.
type Ratio float64

// Decode implements decoder.
func (r *Ratio) Decode(v string) error {
	v = strings.TrimSpace(v)
	num, pct := strings.CutSuffix(v, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if pct {
		f /= 100
	}
	// The negated range test also rejects NaN.
	if err != nil || !(f >= 0 && f <= 1) {
		return errors.New("accepted: a percentage from 0% to 100% (e.g. 0.1%) or a fraction from 0 to 1 (e.g. 0.001)")
	}
	*r = Ratio(f)
	return nil
}

// Seconds is a positive number of seconds, fractions allowed: the
// destination's S3_REQUEST_TIMEOUT is one too.
type Seconds = exporter.Seconds

// Duration is a span of whole hours, minutes and seconds ("2h30m"), or 0 for none, at most
// 168h: the units the chart's schema can check with one pattern.
type Duration time.Duration

// Decode parses v.
func (d *Duration) Decode(v string) error {
	v = strings.TrimSpace(v)
	x, err := time.ParseDuration(v)
	if err != nil || !durationRE.MatchString(v) || x < 0 || x > 168*time.Hour {
		return errors.New("accepted: 0, or whole hours, minutes and seconds such as 50m, 2h30m or 90s, at most 168h")
	}
	*d = Duration(x)
	return nil
}

var durationRE = regexp.MustCompile(`^(0|([0-9]+h)?([0-9]+m)?([0-9]+s)?)$`)

// Load reads the environment through lookup, never the process's (so concurrent loads, as
// parallel tests or the AWS SDK, cannot see each other's values), and validates it. A
// variable set to blanks counts as unset: Helm and Terraform render optional values that way.
func Load(lookup func(string) (string, bool)) (*Config, error) {
	var c Config
	if errs := decode(envSource(lookup), &c); len(errs) > 0 {
		return nil, errs
	}
	if c.ClusterMapFile != "" {
		c.mapFile, c.mapFileErr = exporter.ReadFileMax(c.ClusterMapFile, maxMapFile)
	}
	if c.HeadersFile != "" {
		c.headers, c.headersErr = readHeadersFile(c.HeadersFile)
	}
	c.Settings.Load(lookup)
	if errs := c.Validate(); len(errs) > 0 {
		return nil, errs
	}
	return &c, nil
}

// decoder is a type that parses its own variable, such as Flag or Seconds.
type decoder interface{ Decode(string) error }

// source finds one field's value and the name the user set it under (a variable or a
// -flag); ok is false when the user did not set it.
type source func(f reflect.StructField) (name, raw string, ok bool)

// envSource reads the variable of the env tag; blanks count as unset.
func envSource(lookup func(string) (string, bool)) source {
	return func(f reflect.StructField) (string, string, bool) {
		name := f.Tag.Get("env")
		if name == "" {
			return "", "", false
		}
		raw, ok := lookup(name)
		return name, raw, ok && strings.TrimSpace(raw) != ""
	}
}

// decode fills the struct dst points to by its tags, every command's one table: env and
// flag name the setting (the docs and help read both), default applies when neither is set.
// It returns one error per setting that does not parse, named as the user set it.
func decode(src source, dst any) exporter.FieldErrors {
	var errs exporter.FieldErrors
	v := reflect.ValueOf(dst).Elem()
	for _, f := range settingFields(v.Type()) {
		name, raw, ok := src(f)
		if !ok {
			name, raw, ok = settingName(f), f.Tag.Get("default"), f.Tag.Get("default") != ""
		}
		if !ok {
			continue
		}
		if msg := decodeField(v.FieldByIndex(f.Index), raw); msg != "" {
			errs = append(errs, &exporter.FieldError{Field: name, Value: raw, Msg: msg})
		}
	}
	return errs
}

// settingName is how help and errors name a setting: its variable, else
// its flag.
func settingName(f reflect.StructField) string {
	if env := f.Tag.Get("env"); env != "" {
		return env
	}
	return "-" + f.Tag.Get("flag")
}

// decodeField parses raw into field and returns what is accepted when it
// cannot.
func decodeField(field reflect.Value, raw string) string {
	if d, ok := field.Addr().Interface().(decoder); ok {
		if err := d.Decode(raw); err != nil {
			return err.Error()
		}
		return ""
	}
	switch field.Kind() {
	case reflect.String:
		field.SetString(raw)
	case reflect.Int:
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil {
			return "accepted: an integer"
		}
		field.SetInt(int64(n))
	default:
		// A programming error, caught by the tests of every field.
		panic(fmt.Sprintf("config: no decoder for %s", field.Type()))
	}
	return ""
}

// Var documents one setting for help and the docs.
type Var struct {
	Name, Default, Desc string
	Required            string // "", "true" or a condition
	Flag                string // the command-line flag without its dash; "" for the run's variables
}

// Vars lists every variable of the run in declaration order, without flags (those of
// embedded settings are the other commands'). The AWS SDK's variables (AWS_REGION) are AWS's
// to document, and EKS sets them in the pod: the run's table, and so the chart, omits them.
func Vars() []Var {
	var vars []Var
	for _, v := range varsOf(reflect.TypeOf(Config{})) {
		if !strings.HasPrefix(v.Name, "AWS_") {
			v.Flag = ""
			vars = append(vars, v)
		}
	}
	return vars
}

// settingFields are a struct's fields with an env or flag tag in declaration order, an
// embedded struct's (the destination's) in its place.
func settingFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if !f.Anonymous && (f.Tag.Get("env") != "" || f.Tag.Get("flag") != "") {
			out = append(out, f)
		}
	}
	return out
}

// varsOf lists the settings of a configuration struct in declaration order.
func varsOf(t reflect.Type) []Var {
	var out []Var
	for _, f := range settingFields(t) {
		out = append(out, Var{
			Name:     f.Tag.Get("env"),
			Default:  f.Tag.Get("default"),
			Desc:     f.Tag.Get("desc"),
			Required: f.Tag.Get("req"),
			Flag:     f.Tag.Get("flag"),
		})
	}
	return out
}

// Usage writes the --help text: every variable with its default, in columns as wide as their
// widest cell, so a long default (CLUSTER_ID's condition) keeps descriptions in line.
func Usage(w io.Writer) {
	fmt.Fprintf(w, "Configuration is read from the environment:\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	for _, v := range Vars() {
		def := v.Default
		switch {
		case v.Required == "true":
			def = "(required)"
		case v.Required != "":
			def = "(required " + v.Required + ")"
		case def == "":
			def = "(empty)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.Name, def, v.Desc)
	}
}

// Cluster is what CLUSTER_ID says about the cluster.
type Cluster = exporter.ClusterARN

// Cluster parses CLUSTER_ID. Call it only on a validated Config.
func (c *Config) Cluster() Cluster { return parseCluster(c.ClusterID) }

func parseCluster(arn string) Cluster {
	c, _ := exporter.ParseClusterARN(arn)
	return c
}

func isClusterARN(arn string) bool { _, ok := exporter.ParseClusterARN(arn); return ok }

// BucketOwner is the account S3 calls name as ExpectedBucketOwner, the cluster's by default.
// With clusters in several accounts S3_EXPECTED_BUCKET_OWNER is required, so Home's is the
// one account there is.
func (c *Config) BucketOwner() string { return c.Settings.BucketOwner(c.Home().Account) }

// LabelKeys returns the LABELS keys in order.
func (c *Config) LabelKeys() []string { return SplitList(c.Labels) }

// AnnotationKeys returns the ANNOTATIONS keys in order.
func (c *Config) AnnotationKeys() []string { return SplitList(c.Annotations) }

// Step is the Kubecost step for GRANULARITY.
func (c *Config) Step() time.Duration {
	if c.Granularity == "hourly" {
		return time.Hour
	}
	return 24 * time.Hour
}

// AggregateParam is the explicit `aggregate` query value. Kubecost 2.x
// returns namespace rows when aggregate is omitted, so "container" is sent
// as the full property list that identifies a container.
func (c *Config) AggregateParam() string {
	if c.Aggregation == "container" {
		return "cluster,node,namespace,pod,container"
	}
	return c.Aggregation
}

// AllocationURL is the full URL of the Allocation API, once the endpoint is set or discovered.
func (c *Config) AllocationURL() string {
	return strings.TrimRight(c.KubecostAPIEndpoint, "/") + c.AllocationPath()
}

// SecretsInAWS reports whether Kubecost's CA bundle or bearer token is a Secrets Manager
// secret: AWS credentials are then needed even for a directory archive.
func (c *Config) SecretsInAWS() bool { return c.CASecretName != "" || c.BearerSecret != "" }

// ForceDays parses FORCE_DATES. Call it only on a validated Config.
func (c *Config) ForceDays() []time.Time {
	var out []time.Time
	for _, d := range SplitList(c.ForceDates) {
		if t, err := time.Parse(time.DateOnly, d); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// Settle is SETTLE_HOURS as a duration.
func (w Window) Settle() time.Duration { return time.Duration(w.SettleHours) * time.Hour }
