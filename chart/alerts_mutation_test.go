package chart_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/prometheus/prometheus/promql/parser"
)

// The scenarios must be able to tell a right rule from a nearly right one.
// Each mutation below rewrites the rendered expressions the way a plausible
// mistake would, and every scenario that names it in kills must then fail
// in promtool: an expectation not met, not a broken rule file.

const (
	// The hole alert counts runs since the archive was last whole only,
	// forgetting the backlog's progress.
	mutNoProgress = "no progress term"
	// Runs are dated by their latest pod attempt (max_over_time), so the
	// retries of a run that made progress count as a run since.
	mutLastAttempt = "runs dated by their last attempt"
	// Runs are dated by the earliest start ever seen under their name, so
	// a Job created again under an earlier Job's name is not a new run.
	mutFirstEver = "runs dated by the first start seen under their name"
)

var (
	runStartRange = regexp.MustCompile(`kubecost_s3_exporter_run_start_timestamp_seconds\{[^{}]*\}\[[^\]]+\]`)
	completeTerm  = regexp.MustCompile(`max by \(job, cluster\) \(max_over_time\(kubecost_s3_exporter_last_archive_complete_timestamp_seconds\{[^{}]*\}\[[^\]]+\]\)\)`)
	progressTerm  = regexp.MustCompile(`max by \(job, cluster\) \(max_over_time\(kubecost_s3_exporter_last_backlog_progress_timestamp_seconds\{[^{}]*\}\[[^\]]+\]\)\)`)
)

// mutations rewrite one expression; an expression they do not apply to
// is returned as it is.
var mutations = map[string]func(expr string) string{
	mutNoProgress: func(expr string) string {
		c, p := completeTerm.FindString(expr), progressTerm.FindString(expr)
		if c == "" || p == "" {
			return expr
		}
		return strings.ReplaceAll(expr, fmt.Sprintf("((%[1]s > %[2]s) or %[2]s or %[1]s)", c, p), c)
	},
	mutLastAttempt: func(expr string) string {
		s := runStartRange.FindString(expr)
		if s == "" {
			return expr
		}
		return strings.ReplaceAll(expr, "min_over_time("+s+")", "max_over_time("+s+")")
	},
	mutFirstEver: func(expr string) string {
		s := runStartRange.FindString(expr)
		if s == "" {
			return expr
		}
		q := regexp.QuoteMeta(s)
		dated := regexp.MustCompile(`min_over_time\(` + q + `\) > max_over_time\(` + q + `\) - \d+ or max_over_time\(` + q + `\) - \d+`)
		return dated.ReplaceAllLiteralString(expr, "min_over_time("+s+")")
	},
}

// mutate applies mutation m to every rule of f, checks that it changed at
// least one and that every changed expression still parses, and returns
// the mutated rules and the names of the alerts it changed.
func mutate(t *testing.T, f ruleFile, m string) (ruleFile, []string) {
	t.Helper()
	var out ruleFile
	var changed []string
	for _, g := range f.Groups {
		rules := make([]rule, 0, len(g.Rules))
		for _, r := range g.Rules {
			expr := mutations[m](r.Expr)
			if expr != r.Expr {
				if _, err := parser.ParseExpr(expr); err != nil {
					t.Fatalf("%s: the mutated %s does not parse: %v\n%s", m, r.Alert, err, expr)
				}
				changed = append(changed, r.Alert)
				r.Expr = expr
			}
			rules = append(rules, r)
		}
		g.Rules = rules
		out.Groups = append(out.Groups, g)
	}
	if len(changed) == 0 {
		t.Fatalf("mutation %q changes no rule: the rule's shape changed, update the mutation", m)
	}
	return out, changed
}

// TestAlertRuleMutations runs, for each mutation, the scenarios that must
// catch it against the mutated rules, and fails when one of them still
// passes. The unmutated rules pass them all (TestAlertScenarios).
func TestAlertRuleMutations(t *testing.T) {
	t.Parallel()
	promtool(t)
	rules := map[string]*monitoringv1.PrometheusRule{}
	for m := range mutations {
		var killers []scenario
		for _, sc := range scenarios() {
			for _, k := range sc.kills {
				if mutations[k] == nil {
					t.Fatalf("scenario %q names the unknown mutation %q", sc.name, k)
				}
				if k == m {
					killers = append(killers, sc)
				}
			}
		}
		if len(killers) == 0 {
			t.Errorf("no scenario catches the mutation %q", m)
		}
		for _, sc := range killers {
			key := fmt.Sprint(sc.clusters)
			if rules[key] == nil {
				rules[key] = ruleFor(t, sc.clusters)
			}
			mutated, changed := mutate(t, rulesOf(rules[key], false), m)
			t.Run(m+"/"+sc.name, func(t *testing.T) {
				t.Parallel()
				out, err := testScenario(t, "mutation "+m+"/"+sc.name, sc, mutated)
				missed := firstMismatches(out, mutated.Groups[0].Rules)
				switch {
				case err == nil:
					t.Errorf("%q passes with %v mutated (%s); it must fail", sc.name, changed, m)
				case len(missed) == 0:
					t.Errorf("promtool failed for another reason than an expectation: %v\n%s", err, out)
				default:
					t.Logf("%s: %q caught it: %s", m, sc.name, strings.Join(missed, "; "))
				}
			})
		}
	}
}

// firstMismatches sums up promtool's output: for each alert, the first
// check time at which it did not fire as expected. It is empty when
// promtool failed for another reason (a rule file it could not load).
func firstMismatches(out string, rules []rule) []string {
	prefixes := map[string]string{}
	for _, r := range rules {
		prefixes["expr: "+strconv.Quote("group by (job, cluster) ("+r.Expr+")")+", time: "] = r.Alert
		prefixes["alertname: "+r.Alert+", time: "] = r.Alert
	}
	short := strings.NewReplacer(`, job="`+pgJob+`"`, "", " 1E+00", "", `job="`+pgJob+`", `, "")
	field := func(line, name string) string {
		v, _ := strings.CutPrefix(strings.TrimSpace(line), name+":")
		return short.Replace(strings.TrimSpace(v))
	}
	var got []string
	seen := map[string]bool{}
	lines := slices.Collect(strings.Lines(out))
	for i, line := range lines {
		for p, alert := range prefixes {
			at, ok := strings.CutPrefix(strings.TrimSpace(line), p)
			if !ok || seen[alert] || i+2 >= len(lines) {
				continue
			}
			seen[alert] = true
			got = append(got, fmt.Sprintf("%s at %s: want %s, got %s", alert, strings.TrimSuffix(at, ","),
				field(lines[i+1], "exp"), field(lines[i+2], "got")))
		}
	}
	return got
}
