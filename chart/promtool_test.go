package chart_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
)

// This file turns the rendered PrometheusRule into a Prometheus rule file
// and the scenarios of alerts_test.go into `promtool test rules` input:
// the series each Pushgateway group exposes, scraped every minute.

var (
	promtoolOnce sync.Once
	promtoolPath string
)

// promtool returns the pinned promtool (.ci/install-tools.sh promtool).
func promtool(t *testing.T) string {
	t.Helper()
	promtoolOnce.Do(func() { promtoolPath = tooltest.Require(t, "promtool", "PROMTOOL_BIN") })
	if promtoolPath == "" {
		t.Skip("promtool not found")
	}
	return promtoolPath
}

// ruleFile is a Prometheus rule file.
type ruleFile struct {
	Groups []ruleGroup `json:"groups"`
}

type ruleGroup struct {
	Name  string `json:"name"`
	Rules []rule `json:"rules"`
}

type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// rulesOf converts the rendered PrometheusRule into a rule file; without
// annotations when keep is false, so that the timing tests compare labels
// only (the annotation tests check the texts).
func rulesOf(pr *monitoringv1.PrometheusRule, keep bool) ruleFile {
	var f ruleFile
	for _, g := range pr.Spec.Groups {
		rg := ruleGroup{Name: g.Name}
		for _, r := range g.Rules {
			out := rule{Alert: r.Alert, Expr: r.Expr.String(), Labels: r.Labels}
			if r.For != nil {
				out.For = string(*r.For)
			}
			if keep {
				out.Annotations = r.Annotations
			}
			rg.Rules = append(rg.Rules, out)
		}
		f.Groups = append(f.Groups, rg)
	}
	return f
}

// writeYAML writes v as YAML to dir/name and returns the path.
func writeYAML(t *testing.T, dir, name string, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runPromtool runs promtool with args in dir and fails the test with its
// output when it exits non-zero.
func runPromtool(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), promtool(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Scenario model. Times are minutes from the start of the scenario
// (promtool's time 0); a day is 1440 minutes.
const (
	minute = 1
	hour   = 60 * minute
	day    = 24 * hour
	pgJob  = "kubecost-s3-exporter"
	pgInst = "pushgateway:9091"
)

// push is one pod attempt's push to its cluster's group, at its end.
type push struct {
	at      int    // minute of the push (= the attempt's end)
	cluster string // the group's cluster label
	run     string // the scheduled run (the Job name, RUN_ID)
	start   int    // minute the attempt started
	ok      bool   // exit status 0
	missing int    // archive_missing_days; -1: the run did not plan
	// progress: the run stopped at its budget and shrank the backlog, so
	// it pushes last_backlog_progress_timestamp_seconds.
	progress bool
}

// families returns what exporter/metrics pushes for p that the rules read,
// by family, each family's series by its extra labels.
func (p push) families() map[string]map[string]float64 {
	f := map[string]map[string]float64{
		"kubecost_s3_exporter_last_run_start_timestamp_seconds": {"": float64(p.start * 60)},
		"kubecost_s3_exporter_last_run_success":                 {"": 0},
		"kubecost_s3_exporter_run_start_timestamp_seconds":      {`run="` + p.run + `"`: float64(p.start * 60)},
	}
	if p.ok {
		f["kubecost_s3_exporter_last_run_success"][""] = 1
		f["kubecost_s3_exporter_last_success_timestamp_seconds"] = map[string]float64{"": float64(p.at * 60)}
	}
	if p.missing >= 0 {
		f["kubecost_s3_exporter_archive_missing_days"] = map[string]float64{"": float64(p.missing)}
		if p.missing == 0 {
			f["kubecost_s3_exporter_last_archive_complete_timestamp_seconds"] = map[string]float64{"": float64(p.at * 60)}
		}
	}
	if p.progress {
		f["kubecost_s3_exporter_last_backlog_progress_timestamp_seconds"] = map[string]float64{"": float64(p.at * 60)}
	}
	return f
}

// firing is one stretch of an alert for one cluster: from its first
// firing minute to the first minute it no longer fires (0: still firing
// at the scenario's end).
type firing struct {
	alert, cluster string
	from, to       int
}

type scenario struct {
	name     string
	clusters []string // the clusters the chart maps (the rule's selector)
	end      int      // last minute evaluated
	pushes   []push
	restarts []int // minutes at which the Pushgateway restarts without persistence
	want     []firing
	// kills names the rule mutations (alerts_mutation_test.go) under which
	// this scenario must fail.
	kills []string
}

// seriesOf simulates the Pushgateway (POST replaces the pushed families of
// a group, a restart drops every group) scraped every minute, and returns
// promtool input series: each group's series with a stale marker at the
// minute it disappears from the Pushgateway.
func seriesOf(sc scenario) []map[string]string {
	type key struct{ cluster, family, extra string }
	groups := map[string]map[string]map[string]float64{}
	timeline := map[key][]string{}
	for m := 0; m <= sc.end; m++ {
		if slices.Contains(sc.restarts, m) {
			groups = map[string]map[string]map[string]float64{}
		}
		for _, p := range sc.pushes {
			if p.at != m {
				continue
			}
			if groups[p.cluster] == nil {
				groups[p.cluster] = map[string]map[string]float64{}
			}
			maps.Copy(groups[p.cluster], p.families())
		}
		seen := map[key]bool{}
		for c, g := range groups {
			for fam, series := range g {
				for extra, v := range series {
					k := key{c, fam, extra}
					seen[k] = true
					if timeline[k] == nil {
						timeline[k] = slices.Repeat([]string{"_"}, m)
					}
					timeline[k] = append(timeline[k], strconv.FormatFloat(v, 'f', -1, 64))
				}
			}
		}
		for k, vals := range timeline {
			if seen[k] {
				continue
			}
			// Gone from the scrape: Prometheus writes a staleness marker.
			if last := vals[len(vals)-1]; last != "_" && last != "stale" {
				timeline[k] = append(vals, "stale")
			} else {
				timeline[k] = append(vals, "_")
			}
		}
	}
	out := []map[string]string{}
	for _, k := range slices.SortedFunc(maps.Keys(timeline), func(a, b key) int {
		return strings.Compare(a.cluster+a.family+a.extra, b.cluster+b.family+b.extra)
	}) {
		labels := fmt.Sprintf(`job=%q,cluster=%q,instance=%q`, pgJob, k.cluster, pgInst)
		if k.extra != "" {
			labels += "," + k.extra
		}
		out = append(out, map[string]string{"series": k.family + "{" + labels + "}", "values": compress(timeline[k])})
	}
	return out
}

// compress writes values in promtool's expanding notation: "_xN" for N
// missing samples, "vxN" for N+1 samples of v.
func compress(vals []string) string {
	var parts []string
	for i := 0; i < len(vals); {
		j := i
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		switch n := j - i; {
		case vals[i] == "_":
			parts = append(parts, "_x"+strconv.Itoa(n))
		case vals[i] == "stale":
			parts = append(parts, strings.TrimSpace(strings.Repeat("stale ", n)))
		default:
			parts = append(parts, vals[i]+"x"+strconv.Itoa(n-1))
		}
		i = j
	}
	return strings.Join(parts, " ")
}

// checkTimes are the minutes at which every alert is compared: each
// stretch's first and last firing minute and the minutes around them,
// plus every hour, so an alert that fires anywhere else is caught within
// the hour, and one that starts or stops a minute off fails.
func checkTimes(sc scenario) []int {
	set := map[int]bool{}
	for m := 0; m <= sc.end; m += hour {
		set[m] = true
	}
	for _, f := range sc.want {
		ms := []int{f.from - 1, f.from, f.from + 1}
		if f.to != 0 {
			ms = append(ms, f.to-1, f.to, f.to+1)
		}
		for _, m := range ms {
			if m >= 0 && m <= sc.end {
				set[m] = true
			}
		}
	}
	set[sc.end] = true
	return slices.Sorted(maps.Keys(set))
}

// firingAt lists the clusters for which alert is expected to fire at m.
func (sc scenario) firingAt(alert string, m int) []string {
	var out []string
	for _, f := range sc.want {
		if f.alert == alert && m >= f.from && (f.to == 0 || m < f.to) {
			out = append(out, f.cluster)
		}
	}
	return out
}

// testGroup is the promtool test group of sc. The alerts with a `for`
// (MetricsAbsent) run as alerting rules, evaluated every minute from the
// start, since their state depends on the evaluations before. The others
// have no `for`: such an alert fires at an evaluation exactly when its
// expression returns the cluster's series, which depends only on the data.
// Their expressions, verbatim from the rendered rule, are evaluated by the
// same engine as promql_expr_test at each check time (grouped by job and
// cluster, so the value does not matter). This keeps a week of minutely
// history affordable: one query per check instead of one per minute.
// TestAlertAnnotations runs all four as alerting rules.
func testGroup(sc scenario, rules []rule, severity string) map[string]any {
	var alerts, exprs []map[string]any
	for _, m := range checkTimes(sc) {
		for _, r := range rules {
			firing := sc.firingAt(r.Alert, m)
			if r.For != "" {
				exp := []map[string]any{}
				for _, c := range firing {
					exp = append(exp, map[string]any{"exp_labels": map[string]string{"job": pgJob, "cluster": c, "severity": severity}})
				}
				alerts = append(alerts, map[string]any{"eval_time": strconv.Itoa(m) + "m", "alertname": r.Alert, "exp_alerts": exp})
				continue
			}
			exp := []map[string]any{}
			for _, c := range firing {
				exp = append(exp, map[string]any{"labels": fmt.Sprintf(`{job=%q,cluster=%q}`, pgJob, c), "value": 1})
			}
			exprs = append(exprs, map[string]any{
				"expr": "group by (job, cluster) (" + r.Expr + ")", "eval_time": strconv.Itoa(m) + "m", "exp_samples": exp,
			})
		}
	}
	return map[string]any{
		"name": sc.name, "interval": "1m", "input_series": seriesOf(sc),
		"alert_rule_test": alerts, "promql_expr_test": exprs,
	}
}

// withFor keeps the rules that have a `for`: the only ones a timing test
// loads as alerting rules.
func withFor(f ruleFile) ruleFile {
	var out ruleFile
	for _, g := range f.Groups {
		g.Rules = slices.DeleteFunc(slices.Clone(g.Rules), func(r rule) bool { return r.For == "" })
		out.Groups = append(out.Groups, g)
	}
	return out
}
