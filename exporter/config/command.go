package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// The subcommands other than run read their settings through the same
// table as the run: a struct whose tags name each setting's variable
// (env) and flag (flag), its default and its help (desc); decode parses
// it, a rule table validates it, and help is made from it. A flag wins
// over its variable; a bad value of either is one FieldError naming it as
// the user set it, which the command line turns into exit status 2.

// Report is the configuration of the report command. Its window settings
// are the exporter's own (the same variables, bounds and defaults), so
// that its calendar classifies days as the exporter plans them.
type Report struct {
	Dir      string `env:"OUTPUT_DIR" flag:"dir" desc:"read the archive from this directory"`
	Bucket   string `env:"S3_BUCKET_NAME" flag:"bucket" desc:"read the archive from this S3 bucket"`
	Prefix   string `env:"S3_PREFIX" flag:"prefix" desc:"key prefix before account_id="`
	Region   string `env:"AWS_REGION" flag:"region" desc:"the bucket's region (also read from AWS_DEFAULT_REGION)"`
	From     string `flag:"from" desc:"first day, YYYY-MM-DD (default: the oldest stored day)"`
	To       string `flag:"to" desc:"last day, YYYY-MM-DD (default: the newest stored day)"`
	Clusters string `flag:"cluster" desc:"comma-separated EKS cluster names (default: every cluster found)"`

	BackfillPeriodDays int    `env:"BACKFILL_PERIOD_DAYS" flag:"backfill-days" default:"15" desc:"the exporter's BACKFILL_PERIOD_DAYS"`
	SettleHours        int    `env:"SETTLE_HOURS" flag:"settle-hours" default:"48" desc:"the exporter's SETTLE_HOURS: newer days are pending"`
	RetentionDays      int    `flag:"kubecost-retention-days" default:"15" desc:"days Kubecost keeps: an unarchived day older than this is 'no Kubecost data', a newer one 'missing'"`
	Currency           string `flag:"currency" default:"USD" desc:"the currency of Kubecost's costs, printed with every amount"`
	Today              string `flag:"today" desc:"when the calendar is drawn, YYYY-MM-DD or RFC 3339 (default: now); for reproducible reports"`
	Out                string `flag:"o" default:"report.html" desc:"output file"`

	IRSAParentRoleARN   string `env:"IRSA_PARENT_IAM_ROLE_ARN" desc:"role to assume with the IRSA credentials when the bucket is in another account"`
	ExpectedBucketOwner string `env:"S3_EXPECTED_BUCKET_OWNER" desc:"12-digit account that must own the bucket; 'disabled' or empty to omit"`
	LogLevel            string `env:"LOG_LEVEL" default:"info" desc:"debug, info, warn or error"`
	LogFormat           string `env:"LOG_FORMAT" default:"auto" desc:"json, text, or auto (text on a terminal, else json)"`

	// FromDay, ToDay and TodayTime are From, To and Today parsed.
	FromDay, ToDay, TodayTime time.Time
}

func reportRules() []rule[Report] {
	return []rule[Report]{
		{"OUTPUT_DIR", func(r *Report, bad badFunc) {
			if (r.Dir == "") == (r.Bucket == "") {
				bad(r.Dir, "give exactly one of -dir (OUTPUT_DIR) or -bucket (S3_BUCKET_NAME)")
			}
		}},
		{"S3_BUCKET_NAME", func(r *Report, bad badFunc) { checkBucketName(r.Bucket, bad) }},
		{"S3_PREFIX", func(r *Report, bad badFunc) { checkPrefix(r.Prefix, bad) }},
		{"AWS_REGION", func(r *Report, bad badFunc) {
			if r.Bucket != "" && r.Region == "" {
				bad("", "required with -bucket: the bucket's region")
			}
		}},
		{"AWS_REGION", matches(func(r *Report) string { return r.Region }, regionRE, regionAccepted)},
		{"-from", func(r *Report, bad badFunc) { r.FromDay = checkDay(r.From, bad) }},
		{"-to", func(r *Report, bad badFunc) {
			if r.ToDay = checkDay(r.To, bad); !r.FromDay.IsZero() && !r.ToDay.IsZero() && r.ToDay.Before(r.FromDay) {
				bad(r.To, "is before -from %s", r.From)
			}
		}},
		{"BACKFILL_PERIOD_DAYS", intRange(func(r *Report) int { return r.BackfillPeriodDays }, exporter.MinBackfillDays, maxBackfillDays)},
		{"SETTLE_HOURS", intRange(func(r *Report) int { return r.SettleHours }, 0, maxSettleHours)},
		{"-kubecost-retention-days", intRange(func(r *Report) int { return r.RetentionDays }, 1, maxBackfillDays)},
		{"-currency", func(r *Report, bad badFunc) {
			if r.Currency = strings.TrimSpace(r.Currency); r.Currency == "" {
				bad("", "accepted: a currency code such as USD")
			}
		}},
		{"-today", func(r *Report, bad badFunc) {
			var err error
			if r.TodayTime, err = parseToday(r.Today); err != nil {
				bad(r.Today, "accepted: YYYY-MM-DD or RFC 3339 (2026-11-21T10:00:00Z)")
			}
		}},
		{"IRSA_PARENT_IAM_ROLE_ARN", matches(func(r *Report) string { return r.IRSAParentRoleARN }, roleARNRE, roleAccepted)},
		{"S3_EXPECTED_BUCKET_OWNER", func(r *Report, bad badFunc) { checkOwnerValue(r.ExpectedBucketOwner, bad) }},
		{"LOG_LEVEL", oneOf(func(r *Report) string { return r.LogLevel }, false, LogLevels)},
		{"LOG_FORMAT", oneOf(func(r *Report) string { return r.LogFormat }, false, LogFormats)},
	}
}

// BucketOwner is the account S3 calls name as ExpectedBucketOwner; ""
// disables the check.
func (r *Report) BucketOwner() string {
	if r.ExpectedBucketOwner == "disabled" {
		return ""
	}
	return r.ExpectedBucketOwner
}

// Schema is the configuration of the schema command.
type Schema struct {
	Format      string `flag:"format" default:"json" desc:"json or text"`
	Labels      string `env:"LABELS" flag:"labels" desc:"comma-separated label keys"`
	Annotations string `env:"ANNOTATIONS" flag:"annotations" desc:"comma-separated annotation keys"`
}

func schemaRules() []rule[Schema] {
	return []rule[Schema]{
		{"-format", oneOf(func(s *Schema) string { return s.Format }, false, func() []string { return []string{"json", "text"} })},
		{"LABELS", func(s *Schema, bad badFunc) { checkKeys(s.Labels, bad) }},
		{"ANNOTATIONS", func(s *Schema, bad badFunc) { checkKeys(s.Annotations, bad) }},
	}
}

// LoadReport reads the report command's settings from args and lookup.
// It returns flag.ErrHelp for -h, and exporter.FieldErrors for bad values.
func LoadReport(args []string, lookup func(string) (string, bool), help io.Writer) (*Report, error) {
	// AWS_REGION's fallback is the SDK's own second name for it.
	alias := func(k string) (string, bool) {
		if v, ok := lookup(k); ok || k != "AWS_REGION" {
			return v, ok
		}
		return lookup("AWS_DEFAULT_REGION")
	}
	return load[Report]("report", args, alias, help, reportRules())
}

// LoadSchema reads the schema command's settings from args and lookup.
func LoadSchema(args []string, lookup func(string) (string, bool), help io.Writer) (*Schema, error) {
	return load[Schema]("schema", args, lookup, help, schemaRules())
}

// load parses the flags of command into a T, then decodes and validates
// it like the run's Config. help receives the usage for -h and the flag
// package's own errors (an unknown flag).
func load[T any](command string, args []string, lookup func(string) (string, bool), help io.Writer, rules []rule[T]) (*T, error) {
	var c T
	t := reflect.TypeOf(c)
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(help)
	fs.Usage = func() { CommandUsage(help, command, t) }
	set := map[string]string{}
	for _, v := range varsOf(t) {
		if v.Flag != "" {
			fs.Func(v.Flag, v.Desc, func(s string) error { set[v.Flag] = s; return nil })
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, &exporter.FieldError{Field: command, Value: fs.Arg(0), Msg: "takes no arguments; settings are flags or variables (see -h)"}
	}
	names := map[string]string{} // a rule's Var -> the flag the user set it with
	env := envSource(lookup)
	src := func(f reflect.StructField) (string, string, bool) {
		if fl := f.Tag.Get("flag"); fl != "" {
			if raw, ok := set[fl]; ok {
				names[settingName(f)] = "-" + fl
				return "-" + fl, raw, true
			}
		}
		return env(f)
	}
	if errs := decode(src, &c); len(errs) > 0 {
		return nil, errs
	}
	if errs := validate(&c, rules, names); len(errs) > 0 {
		return nil, errs
	}
	return &c, nil
}

// IsHelp reports whether err, from a Load function, asked for help.
func IsHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }

// CommandUsage writes a subcommand's help from its table: every flag with
// its variable and default.
func CommandUsage(w io.Writer, command string, t reflect.Type) {
	fmt.Fprintf(w, "Usage: kubecost-s3-exporter %s [flags]\n\nA flag wins over its variable:\n\n", command)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	for _, v := range varsOf(t) {
		name, env, def := "", "", v.Default
		if v.Flag != "" {
			name = "-" + v.Flag
		}
		if v.Name != "" {
			env = "$" + v.Name
		}
		if def == "" {
			def = "(empty)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", name, env, def, v.Desc)
	}
}

// checkDay parses an optional YYYY-MM-DD day.
func checkDay(s string, bad badFunc) time.Time {
	if s == "" {
		return time.Time{}
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		bad(s, "accepted: a YYYY-MM-DD day")
	}
	return d
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
