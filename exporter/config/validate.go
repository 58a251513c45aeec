package config

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
)

var (
	// A secret is named, or, for one in another account, given by ARN
	// (its partition and region as exporter/names.go spells them).
	secretNameRE = regexp.MustCompile(`^(?:[a-zA-Z0-9/_+=.@-]{1,512}|arn:` + exporter.PartitionPattern + `:secretsmanager:` +
		exporter.RegionPattern + `:\d{12}:secret:[a-zA-Z0-9/_+=.@-]{1,512})$`)
	labelNameRE = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	dnsLabelRE  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
)

// Aggregations are the accepted AGGREGATION values.
func Aggregations() []string {
	return []string{"container", "pod", "namespace", "controller", "controllerKind", "node", "cluster"}
}

// LogLevels are the accepted LOG_LEVEL values.
func LogLevels() []string { return []string{"debug", "info", "warn", "error"} }

// LogFormats are the accepted LOG_FORMAT values.
func LogFormats() []string { return []string{"auto", "json", "text"} }

// names are another package's enumeration values, for oneOf: package kubecost knows what
// each server reads (KUBECOST_API_FLAVOR, KUBECOST_CLUSTER_FILTER).
func names[S ~string](list []S) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = string(v)
	}
	return out
}

// rule checks one setting of a configuration struct T, calling bad once per problem with
// the value as the user wrote it and what is accepted.
type rule[T any] struct {
	Var   string
	Check func(c *T, bad func(value, format string, args ...any))
}

// Validate checks every variable, without side effects.
func (c *Config) Validate() exporter.FieldErrors { return validate(c, Rules(), nil) }

// validate runs rules over c: one error per problem, in rule order, naming the setting as
// the user set it (names: a variable given as a -flag), else by the rule's Var.
func validate[T any](c *T, rules []rule[T], names map[string]string) exporter.FieldErrors {
	var errs exporter.FieldErrors
	for _, r := range rules {
		r.Check(c, func(value, format string, args ...any) {
			errs = append(errs, &exporter.FieldError{Field: cmp.Or(names[r.Var], r.Var), Value: value, Msg: fmt.Sprintf(format, args...)})
		})
	}
	return errs
}

type badFunc = func(value, format string, args ...any)

// oneOf accepts the listed values.
func oneOf[T any](get func(*T) string, allowed ...string) func(*T, badFunc) {
	return func(c *T, bad badFunc) {
		if v := get(c); !slices.Contains(allowed, v) {
			bad(v, "accepted: %s", strings.Join(allowed, ", "))
		}
	}
}

// intRange accepts lo..hi inclusive.
func intRange[T any](get func(*T) int, lo, hi int) func(*T, badFunc) {
	return func(c *T, bad badFunc) {
		if v := get(c); v < lo || v > hi {
			bad(fmt.Sprint(v), "accepted: an integer from %d to %d", lo, hi)
		}
	}
}

// matches accepts "" and values matching re.
func matches[T any](get func(*T) string, re *regexp.Regexp, accepted string) func(*T, badFunc) {
	return func(c *T, bad badFunc) {
		if v := get(c); v != "" && !re.MatchString(v) {
			bad(v, "accepted: %s", accepted)
		}
	}
}

// secretAccepted is what secretNameRE accepts, in the words of errors.
const secretAccepted = "a secret name (1-512 of a-z A-Z 0-9 / _ + = . @ -) or a Secrets Manager secret ARN"

// Rule checks one variable of the run.
type Rule = rule[Config]

// Rules lists the checks in declaration order, one per variable its type does not validate;
// the chart's parity test requires a rejected case for each.
func Rules() []Rule {
	return slices.Concat(destinationRules(destination.Rules(), func(c *Config) (*destination.Settings, destination.Scope) {
		return &c.Settings, destination.Scope{Partition: c.Home().Partition, Region: c.Home().Region, Accounts: c.accounts(), Clusters: true}
	}), []Rule{
		{"CLUSTER_ID", checkCluster},
		{"CLUSTER_ARNS", checkClusterARNs},
		{"CLUSTER_MAP_FILE", checkClusterMapFile},
		{"KUBECOST_CLUSTER_FILTER", func(c *Config, bad badFunc) {
			if p := kubecost.FilterProblem(kubecost.Flavor(c.KubecostAPIFlavor), kubecost.ClusterFilter(c.ClusterFilter)); p != "" {
				bad(c.ClusterFilter, "%s", p)
			}
		}},
		{"KUBECOST_API_ENDPOINT", checkEndpoint},
		{"KUBECOST_NAMESPACE", matches(func(c *Config) string { return c.KubecostNamespace }, dnsLabelRE, dnsLabelAccepted)},
		{"KUBECOST_RELEASE", matches(func(c *Config) string { return c.KubecostRelease }, releaseRE, releaseAccepted)},
		{"KUBECOST_HTTP_HEADERS_FILE", checkHeadersFile},
		{"KUBECOST_API_FLAVOR", oneOf(func(c *Config) string { return c.KubecostAPIFlavor }, names(kubecost.Flavors())...)},
		{"KUBECOST_API_PATH", checkAPIPath},
	}, windowRules(func(c *Config) *Window { return &c.Window }), []Rule{
		{"AGGREGATION", oneOf(func(c *Config) string { return c.Aggregation }, Aggregations()...)},
		{"GRANULARITY", oneOf(func(c *Config) string { return c.Granularity }, "daily", "hourly")},
		{"KUBECOST_MAX_RETRIES", intRange(func(c *Config) int { return c.Retries }, 0, 20)},
		{"MAX_VALUE_BYTES", intRange(func(c *Config) int { return c.MaxValueBytes }, 4096, 1<<30)},
		{"BACKFILL_MAX_DAYS", intRange(func(c *Config) int { return c.BackfillMaxDays }, exporter.MinBackfillDays, maxBackfillDays)},
		{"KUBECOST_CA_CERTIFICATE_SECRET_NAME", matches(func(c *Config) string { return c.CASecretName }, secretNameRE, secretAccepted)},
		{"KUBECOST_CA_CERTIFICATE_SECRET_REGION", func(c *Config, bad badFunc) {
			if r := c.CASecretRegion; r != "" && !exporter.IsRegion(r) {
				bad(r, "accepted: %s", exporter.RegionAccepted)
			}
		}},
		{"KUBECOST_BEARER_TOKEN_FILE", func(c *Config, bad badFunc) {
			if c.BearerSecret != "" && c.BearerFile != "" {
				bad(c.BearerFile, "set KUBECOST_BEARER_TOKEN_FILE or KUBECOST_BEARER_TOKEN_SECRET_NAME, not both")
			}
		}},
		{"KUBECOST_BEARER_TOKEN_SECRET_NAME", matches(func(c *Config) string { return c.BearerSecret }, secretNameRE, secretAccepted)},
		{"LABELS", func(c *Config, bad badFunc) { checkKeys(c.Labels, bad) }},
		{"ANNOTATIONS", func(c *Config, bad badFunc) { checkKeys(c.Annotations, bad) }},
		{"COMPRESSION", oneOf(func(c *Config) string { return c.Compression }, names(exporter.Codecs())...)},
		{"CONCURRENCY", intRange(func(c *Config) int { return c.Concurrency }, 1, 8)},
		{"FORCE_DATES", checkForceDates},
		{"MAX_CLUSTER_DAYS_PER_RUN", intRange(func(c *Config) int { return c.MaxClusterDaysPerRun }, 0, 1000000)},
	}, loggingRules(func(c *Config) *Logging { return &c.Logging }), []Rule{
		{"PUSHGATEWAY_URL", checkPushgateway},
	})
}

// The bounds of the window's settings, which the report shares.
const (
	maxBackfillDays = 3650
	maxSettleHours  = 720
)

// windowRules are the Window's rules, for every command that embeds one.
func windowRules[T any](of func(*T) *Window) []rule[T] {
	return []rule[T]{
		{"BACKFILL_PERIOD_DAYS", intRange(func(c *T) int { return of(c).BackfillPeriodDays }, exporter.MinBackfillDays, maxBackfillDays)},
		{"SETTLE_HOURS", intRange(func(c *T) int { return of(c).SettleHours }, 0, maxSettleHours)},
	}
}

// loggingRules are the Logging's rules, for every command that embeds one.
func loggingRules[T any](of func(*T) *Logging) []rule[T] {
	return []rule[T]{
		{"LOG_LEVEL", oneOf(func(c *T) string { return of(c).LogLevel }, LogLevels()...)},
		{"LOG_FORMAT", oneOf(func(c *T) string { return of(c).LogFormat }, LogFormats()...)},
	}
}

func checkCluster(c *Config, bad badFunc) {
	switch {
	case c.ClusterID != "" && c.Federated():
		bad(c.ClusterID, "set CLUSTER_ID for one cluster, or CLUSTER_ARNS or CLUSTER_MAP_FILE for a federated Kubecost, not both")
	case c.Federated():
	case c.ClusterID == "":
		bad("", "required: the EKS cluster ARN, arn:<partition>:eks:<region>:<account>:cluster/<name> "+
			"(or, for a federated Kubecost, CLUSTER_ARNS or CLUSTER_MAP_FILE)")
	case !isClusterARN(c.ClusterID):
		bad(c.ClusterID, "accepted: %s", exporter.ClusterARNAccepted)
	}
}

func checkEndpoint(c *Config, bad badFunc) {
	if c.KubecostAPIEndpoint == "" {
		checkDiscovery(c, bad)
		return
	}
	if !exporter.IsBaseURL(c.KubecostAPIEndpoint) {
		bad(c.KubecostAPIEndpoint, "accepted: %s", exporter.BaseURLAccepted)
	}
}

func checkPushgateway(c *Config, bad badFunc) {
	if p := c.PushgatewayURL; p != "" && !exporter.IsBaseURL(p) {
		bad(exporter.Redact(p), "accepted: %s of a Prometheus Pushgateway", exporter.BaseURLAccepted)
	}
}

func checkAPIPath(c *Config, bad badFunc) {
	if p := c.KubecostAPIPath; p != "" && (!strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#")) {
		bad(p, "accepted: a path starting with /, such as %s", kubecost.FlavorKubecost.Path())
	}
}

// checkKeys reports the first bad or repeated key of a LABELS-style list.
func checkKeys(list string, bad badFunc) {
	seen := map[string]bool{}
	for _, k := range SplitList(list) {
		if msg := KeyProblem(k); msg != "" {
			bad(list, "%q %s", k, msg)
			return
		}
		if seen[k] {
			bad(list, "%q is listed twice", k)
			return
		}
		seen[k] = true
	}
}

func checkForceDates(c *Config, bad badFunc) {
	for _, d := range SplitList(c.ForceDates) {
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			bad(c.ForceDates, "%q is not a YYYY-MM-DD date", d)
			return
		}
	}
}

// KeyProblem returns why k is not a valid Kubernetes label or annotation
// key ([prefix/]name), or "" when it is.
func KeyProblem(k string) string {
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		name, prefix = prefix, ""
	}
	if !labelNameRE.MatchString(name) {
		return "is not a valid key: the name part must be 1-63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric"
	}
	if hasPrefix {
		if len(prefix) > 253 || prefix == "" {
			return "is not a valid key: the prefix must be a DNS subdomain of at most 253 characters"
		}
		for _, part := range strings.Split(prefix, ".") {
			if !dnsLabelRE.MatchString(part) {
				return "is not a valid key: the prefix must be a lowercase DNS subdomain"
			}
		}
	}
	return ""
}

// SplitList splits a comma-separated list, trimming spaces and dropping
// empty items ("app, team," is two keys).
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Warnings are problems worth logging that do not stop the run.
func (c *Config) Warnings() []string {
	w := c.Settings.Warnings()
	if !bool(c.TLSVerify) && strings.HasPrefix(c.KubecostAPIEndpoint, "https://") {
		w = append(w, "TLS_VERIFY is off: Kubecost's certificate is not checked")
	}
	if bool(c.Paginate) && c.Granularity == "daily" {
		w = append(w, "KUBECOST_ALLOCATION_API_PAGINATE only applies to GRANULARITY=hourly; ignored")
	}
	return w
}

// destinationRules are the destination's rules over the settings a command embeds
// (Settings, Bill), so every command checks them alike.
func destinationRules[T, S any](rs []destination.Rule[S], of func(*T) (*S, destination.Scope)) []rule[T] {
	var out []rule[T]
	for _, r := range rs {
		out = append(out, rule[T]{r.Var, func(c *T, bad badFunc) { s, sc := of(c); r.Check(s, sc, bad) }})
	}
	return out
}
