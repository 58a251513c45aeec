package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
)

// The other subcommands read their settings through the run's kind of table (see decode): a
// flag wins over its variable; a bad value of either is one FieldError naming it as the user
// set it, which the command line turns into exit status 2.

// Report is the configuration of the report command; its Window is the run's (see Window).
type Report struct {
	// The archive, as the run names and opens it (destination.Open).
	destination.Settings

	// Read only for its region, so that the run's own environment opens its archive.
	ClusterID string `env:"CLUSTER_ID" desc:"the run's cluster ARN: its region is the default of -region"`
	From      string `flag:"from" desc:"first day, YYYY-MM-DD (default: the oldest stored day)"`
	To        string `flag:"to" desc:"last day, YYYY-MM-DD (default: the newest stored day)"`
	Clusters  string `flag:"cluster" desc:"comma-separated EKS cluster names (default: every cluster found)"`

	Window
	RetentionDays int    `flag:"kubecost-retention-days" desc:"days Kubecost keeps: an unarchived day older than this is 'no Kubecost data', a newer one 'missing' (default: ask Kubecost which days it holds, with the run's own settings, as the run does; where the environment is not the run's, 15)"`
	Currency      string `flag:"currency" default:"USD" desc:"the currency of Kubecost's costs, printed with every amount"`
	Today         string `flag:"today" desc:"when the calendar is drawn, YYYY-MM-DD or RFC 3339 (default: now); for reproducible reports"`
	Out           string `flag:"o" default:"report.html" desc:"output file"`

	// The bill to compare with, loaded (Load) and checked (BillRules) like the archive.
	destination.Bill

	Logging

	// From, To and Today parsed.
	FromDay, ToDay, TodayTime time.Time
}

// Load reads what the archive's settings name, then the bill's, before any rule runs.
func (r *Report) Load(lookup func(string) (string, bool)) {
	r.Settings.Load(lookup)
	r.Bill.Load(&r.Settings, lookup)
}

// reportScope tells the destination's rules the report's cluster region.
func reportScope(r *Report) destination.Scope {
	return destination.Scope{Region: parseCluster(r.ClusterID).Region}
}

// Schema is the configuration of the schema command.
type Schema struct {
	Format      string `flag:"format" default:"json" desc:"json or text"`
	Labels      string `env:"LABELS" flag:"labels" desc:"comma-separated label keys"`
	Annotations string `env:"ANNOTATIONS" flag:"annotations" desc:"comma-separated annotation keys"`
}

// LoadReport reads the report command's settings from args and lookup.
// It returns flag.ErrHelp for -h, and exporter.FieldErrors for bad values.
func LoadReport(args []string, lookup func(string) (string, bool), help io.Writer) (*Report, error) {
	return load("report", args, lookup, help, slices.Concat(destinationRules(destination.Rules(), func(r *Report) (*destination.Settings, destination.Scope) {
		return &r.Settings, reportScope(r)
	}), []rule[Report]{
		{"-from", func(r *Report, bad badFunc) { r.FromDay = checkDay(r.From, bad) }},
		{"-to", func(r *Report, bad badFunc) {
			if r.ToDay = checkDay(r.To, bad); !r.FromDay.IsZero() && !r.ToDay.IsZero() && r.ToDay.Before(r.FromDay) {
				bad(r.To, "is before -from %s", r.From)
			}
		}},
	}, windowRules(func(r *Report) *Window { return &r.Window }), []rule[Report]{
		{"-kubecost-retention-days", func(r *Report, bad badFunc) {
			if r.RetentionDays != 0 { // 0: ask Kubecost
				intRange(func(r *Report) int { return r.RetentionDays }, 1, maxBackfillDays)(r, bad)
			}
		}},
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
	}, destinationRules(destination.BillRules(), func(r *Report) (*destination.Bill, destination.Scope) {
		return &r.Bill, reportScope(r)
	}), loggingRules(func(r *Report) *Logging { return &r.Logging })))
}

// LoadSchema reads the schema command's settings from args and lookup.
func LoadSchema(args []string, lookup func(string) (string, bool), help io.Writer) (*Schema, error) {
	return load("schema", args, lookup, help, []rule[Schema]{
		{"-format", oneOf(func(s *Schema) string { return s.Format }, "json", "text")},
		{"LABELS", func(s *Schema, bad badFunc) { checkKeys(s.Labels, bad) }},
		{"ANNOTATIONS", func(s *Schema, bad badFunc) { checkKeys(s.Annotations, bad) }},
	})
}

// load parses command's flags into a T, then decodes and validates it like the run's Config.
// help receives the usage for -h and the flag package's errors (an unknown flag).
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
	names := map[string]string{}  // a rule's Var -> the flag the user set it with
	byFlag := map[string]string{} // a variable the user set as a flag -> its value
	env := envSource(lookup)
	src := func(f reflect.StructField) (string, string, bool) {
		if fl := f.Tag.Get("flag"); fl != "" {
			if raw, ok := set[fl]; ok {
				names[settingName(f)] = "-" + fl
				if v := f.Tag.Get("env"); v != "" {
					byFlag[v] = raw
				}
				return "-" + fl, raw, true
			}
		}
		return env(f)
	}
	if errs := decode(src, &c); len(errs) > 0 {
		return nil, errs
	}
	if d, ok := any(&c).(interface {
		Load(func(string) (string, bool))
	}); ok {
		// The flags answer for their variables, so that the destination's file is held to
		// the command line (-bucket against config.bucket) as to the variables.
		d.Load(func(name string) (string, bool) {
			if raw, ok := byFlag[name]; ok {
				return raw, true
			}
			return lookup(name)
		})
	}
	if errs := validate(&c, rules, names); len(errs) > 0 {
		return nil, errs
	}
	return &c, nil
}

// IsHelp reports whether err, from a Load function, asked for help.
func IsHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }

// CommandUsage writes a subcommand's help: every flag with its variable and default.
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
