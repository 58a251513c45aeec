package config

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// commandBase is the smallest valid environment of each subcommand that
// reads variables, with the variable under test left to the caller.
func commandBase(name string) map[string]string {
	if name == "S3_BUCKET_NAME" || name == "AWS_REGION" {
		return map[string]string{"S3_BUCKET_NAME": "kubecost-cost-data", "AWS_REGION": "us-east-1"}
	}
	return map[string]string{"OUTPUT_DIR": "archive"}
}

// commandLoads are the subcommands' entry points with their tables.
var commandLoads = []struct {
	command string
	t       reflect.Type
	load    func(args []string, lookup func(string) (string, bool)) error
}{
	{"report", reflect.TypeOf(Report{}), func(args []string, lookup func(string) (string, bool)) error {
		_, err := LoadReport(args, lookup, io.Discard)
		return err
	}},
	{"schema", reflect.TypeOf(Schema{}), func(args []string, lookup func(string) (string, bool)) error {
		_, err := LoadSchema(args, lookup, io.Discard)
		return err
	}},
}

// checkCommands feeds one invalid value of the run's table to every other
// subcommand that reads the variable, as a variable and as its flag: each
// must refuse it with the run's one error, naming the variable or the
// flag as the user set it. A rule that depends on the run's clusters (the
// role's partition against the cluster's) has no counterpart elsewhere.
func checkCommands(t *testing.T, name, value, want string) {
	t.Helper()
	if strings.Contains(want, "partition") || strings.Contains(want, "required when the clusters") {
		return
	}
	for _, c := range commandLoads {
		for _, v := range varsOf(c.t) {
			if v.Name != name {
				continue
			}
			env := commandBase(name)
			env[name] = value
			err := c.load(nil, func(k string) (string, bool) { s, ok := env[k]; return s, ok })
			if msg := checkOneError(err, name, value, want); msg != "" {
				t.Errorf("%s, %s=%q: %s", c.command, name, value, msg)
			}
			if v.Flag == "" {
				continue
			}
			env = commandBase(name)
			delete(env, name)
			err = c.load([]string{"-" + v.Flag, value}, func(k string) (string, bool) { s, ok := env[k]; return s, ok })
			if msg := checkOneError(err, "-"+v.Flag, value, want); msg != "" {
				t.Errorf("%s -%s %q: %s", c.command, v.Flag, value, msg)
			}
		}
	}
}

// TestCommandInvalidValues: the settings only the other subcommands have,
// refused like the run's: one error naming the flag, the value and what
// is accepted.
func TestCommandInvalidValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		command string
		args    []string
		env     map[string]string
		name    string
		value   string
		want    string
	}{
		{"report", []string{"-kubecost-retention-days", "-1"}, nil, "-kubecost-retention-days", "-1", "accepted: an integer from 1 to 3650"},
		{"report", []string{"-kubecost-retention-days", "x"}, nil, "-kubecost-retention-days", "x", "accepted: an integer"},
		{"report", []string{"-currency", " "}, nil, "-currency", "", "accepted: a currency code"},
		{"report", []string{"-today", "yesterday"}, nil, "-today", "yesterday", "accepted: YYYY-MM-DD or RFC 3339"},
		{"report", []string{"-from", "2026-13-01"}, nil, "-from", "2026-13-01", "accepted: a YYYY-MM-DD day"},
		{"report", []string{"-from", "2026-11-05", "-to", "2026-11-01"}, nil, "-to", "2026-11-01", "is before -from 2026-11-05"},
		{"report", nil, map[string]string{"OUTPUT_DIR": "", "S3_BUCKET_NAME": ""}, "S3_BUCKET_NAME", "", "required unless OUTPUT_DIR"},
		{"report", []string{"-bucket", "kubecost-cost-data"}, map[string]string{"OUTPUT_DIR": ""}, "AWS_REGION", "", "required with a bucket"},
		{"report", []string{"-bucket", "kubecost-cost-data", "-region", "us-east"}, map[string]string{"OUTPUT_DIR": ""}, "-region", "us-east", exporter.RegionAccepted},
		{"report", nil, map[string]string{"AWS_DEFAULT_REGION": "useast1", "S3_BUCKET_NAME": "kubecost-cost-data", "OUTPUT_DIR": ""}, "AWS_REGION", "useast1", exporter.RegionAccepted},
		{"schema", []string{"-format", "yaml"}, nil, "-format", "yaml", "accepted: json, text"},
	}
	for _, tc := range cases {
		t.Run(tc.command+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"OUTPUT_DIR": "archive"}
			for k, v := range tc.env {
				env[k] = v
			}
			lookup := func(k string) (string, bool) { s, ok := env[k]; return s, ok }
			var err error
			if tc.command == "report" {
				_, err = LoadReport(tc.args, lookup, io.Discard)
			} else {
				_, err = LoadSchema(tc.args, lookup, io.Discard)
			}
			if msg := checkOneError(err, tc.name, tc.value, tc.want); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// TestCommandFlagWins: a flag overrides its variable, a variable its
// default, and AWS_DEFAULT_REGION stands in for AWS_REGION as in the SDK.
func TestCommandFlagWins(t *testing.T) {
	t.Parallel()
	env := map[string]string{"OUTPUT_DIR": "archive", "SETTLE_HOURS": "24", "BACKFILL_PERIOD_DAYS": "30", "AWS_DEFAULT_REGION": "eu-west-1"}
	r, err := LoadReport([]string{"-settle-hours", "72"}, func(k string) (string, bool) { s, ok := env[k]; return s, ok }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if r.SettleHours != 72 || r.BackfillPeriodDays != 30 || r.RetentionDays != 0 || r.Currency != "USD" || r.STSRegion() != "eu-west-1" {
		t.Errorf("settle %d, backfill %d, retention %d, currency %q, region %q; want 72, 30, 0 (ask Kubecost), USD, eu-west-1",
			r.SettleHours, r.BackfillPeriodDays, r.RetentionDays, r.Currency, r.STSRegion())
	}
	if _, err := LoadReport([]string{"-h"}, func(string) (string, bool) { return "", false }, io.Discard); !IsHelp(err) {
		t.Errorf("-h: %v, want help", err)
	}
	if _, err := LoadReport([]string{"-dir", "a", "extra"}, func(string) (string, bool) { return "", false }, io.Discard); err == nil {
		t.Errorf("an argument: %v, want an error", err)
	}
}
