package chart_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

// The alerts in Prometheus' own rule engine (promtool test rules): each
// scenario is a sequence of pushes as exporter/metrics makes them and
// Pushgateway restarts, scraped every minute (promtool_test.go), and pins
// every alert to the minute it starts and stops firing. The defaults hold:
// noSuccessHours 30, holeRuns 2, failedRuns 3, lookback 7d; runs are daily
// at midnight and push 5 minutes later.

const (
	noRecent = "KubecostS3ExporterNoRecentSuccess"
	hole     = "KubecostS3ExporterArchiveHole"
	failing  = "KubecostS3ExporterFailing"
	absent   = "KubecostS3ExporterMetricsAbsent"

	noSuccess = 30 * hour // prometheusRule.noSuccessHours
	lookback  = 7 * day   // prometheusRule.lookback
)

var fleet = []string{"prod", "staging"}

// daily is the scheduled run of day d for cluster c, one pod attempt: it
// starts at midnight and pushes 5 minutes later. The Job name is the
// run label, shared by the clusters of a federated run.
func daily(c string, d int, ok bool, missing int) push {
	return push{at: d*day + 5, cluster: c, run: "kse-" + strconv.Itoa(d), start: d * day, ok: ok, missing: missing}
}

// days is daily for days from..to (inclusive).
func days(c string, from, to int, ok bool, missing int) []push {
	var out []push
	for d := from; d <= to; d++ {
		out = append(out, daily(c, d, ok, missing))
	}
	return out
}

// retried is day d's run failing in three pod attempts (backoffLimit 2),
// 6 minutes apart, each pushing under the same run label.
func retried(c string, d, missing int) []push {
	var out []push
	for a := range 3 {
		p := daily(c, d, false, missing)
		p.start += 6 * a
		p.at += 6 * a
		out = append(out, p)
	}
	return out
}

func cat(ps ...[]push) []push {
	var out []push
	for _, p := range ps {
		out = append(out, p...)
	}
	return out
}

// after is the first minute at which "more than noSuccessHours since t"
// holds: the rule compares seconds with >.
func after(t int) int { return t + noSuccess + 1 }

func scenarios() []scenario {
	prod := []string{"prod"}
	return append([]scenario{{
		name: "healthy daily schedule", clusters: prod, end: 5 * day,
		pushes: days("prod", 0, 4, true, 0),
	}, {
		name: "a run five hours late", clusters: prod, end: 4 * day,
		pushes: cat(days("prod", 0, 1, true, 0),
			[]push{{at: 2*day + 5*hour + 5, cluster: "prod", run: "kse-2", start: 2*day + 5*hour, ok: true}},
			days("prod", 3, 3, true, 0)),
	}, {
		name: "a single failed run", clusters: prod, end: 3 * day,
		pushes: []push{daily("prod", 0, true, 0), daily("prod", 1, false, -1), daily("prod", 2, true, 0)},
		want:   []firing{{noRecent, "prod", after(5), 2*day + 5}},
	}, {
		name: "zero days planned while a day Kubecost lost stays missing", clusters: prod, end: 4 * day,
		pushes: cat([]push{daily("prod", 0, false, 1)}, days("prod", 1, 3, true, 1)),
		want:   []firing{{hole, "prod", day + 5, 0}},
	}, {
		name: "fresh install", clusters: prod, end: 4 * day,
		pushes: cat([]push{{at: 2*hour + 5, cluster: "prod", run: "kse-export-5d8f", start: 2 * hour, ok: true}},
			days("prod", 1, 3, true, 0)),
	}, {
		name: "fresh install whose every run fails", clusters: prod, end: 4 * day,
		pushes: cat([]push{{at: 5, cluster: "prod", run: "kse-export-5d8f", start: 0, missing: -1}},
			days("prod", 1, 3, false, -1)),
		// No success ever: counted from the first run's start.
		want: []firing{{noRecent, "prod", after(0), 0}, {failing, "prod", 2*day + 5, 0}},
	}, {
		name: "fresh install whose every run fails in three pod attempts", clusters: prod, end: 4 * day,
		pushes: cat(retried("prod", 0, -1), retried("prod", 1, -1), retried("prod", 2, -1), retried("prod", 3, -1)),
		// Counted from the start of the first run's first attempt.
		want:  []firing{{noRecent, "prod", after(0), 0}, {failing, "prod", 2*day + 5, 0}},
		kills: []string{mutLastAttempt},
	}, {
		name: "configuration error (exit 2) from day 1", clusters: prod, end: 4 * day,
		pushes: cat([]push{daily("prod", 0, true, 0)}, days("prod", 1, 3, false, -1)),
		want:   []firing{{noRecent, "prod", after(5), 0}, {failing, "prod", 3*day + 5, 0}},
	}, {
		name: "pod retries: two scheduled runs of three attempts each", clusters: prod, end: 4 * day,
		pushes: cat([]push{daily("prod", 0, true, 0)}, retried("prod", 1, 1), retried("prod", 2, 1),
			[]push{daily("prod", 3, true, 0)}),
		want: []firing{{noRecent, "prod", after(5), 3*day + 5}, {hole, "prod", 2*day + 5, 3*day + 5}},
	}, {
		name: "federated outage: Kubecost unreachable", clusters: fleet, end: 4 * day,
		pushes: cat(days("prod", 0, 0, true, 0), days("staging", 0, 0, true, 0),
			days("prod", 1, 3, false, -1), days("staging", 1, 3, false, -1)),
		want: []firing{
			{noRecent, "prod", after(5), 0}, {noRecent, "staging", after(5), 0},
			{failing, "prod", 3*day + 5, 0}, {failing, "staging", 3*day + 5, 0},
		},
	}, {
		name: "federated fleet where one cluster fails", clusters: fleet, end: 4 * day,
		pushes: cat(days("prod", 0, 3, true, 0), days("staging", 0, 0, true, 0), days("staging", 1, 3, false, 2)),
		want: []firing{
			{noRecent, "staging", after(5), 0}, {hole, "staging", 2*day + 5, 0}, {failing, "staging", 3*day + 5, 0},
		},
	}, {
		name: "Pushgateway restart while failing", clusters: prod, end: 5 * day,
		pushes:   cat([]push{daily("prod", 0, true, 0)}, days("prod", 1, 4, false, -1)),
		restarts: []int{2*day + 10*hour},
		want:     []firing{{noRecent, "prod", after(5), 0}, {failing, "prod", 3*day + 5, 0}},
	}, {
		name: "Pushgateway restart and no more runs", clusters: prod, end: 2*day + 10*hour + lookback + hour,
		pushes:   days("prod", 0, 1, true, 0),
		restarts: []int{2*day + 10*hour},
		want: []firing{
			// The history read over lookback ends with the last scrape
			// before the restart (range selectors are left-open).
			{noRecent, "prod", after(day + 5), 2*day + 10*hour - 1 + lookback},
			{absent, "prod", 2*day + 10*hour + noSuccess, 0},
		},
	}, {
		name: "cluster removed from the map keeps its group", clusters: []string{"prod"}, end: 4 * day,
		pushes: cat(days("prod", 0, 3, true, 0), days("staging", 0, 0, true, 0)),
	}}, backlogScenarios()...)
}

var alertNames4 = []string{noRecent, hole, failing, absent}

// ruleFor renders the PrometheusRule for the given mapped clusters.
func ruleFor(t *testing.T, clusters []string) *monitoringv1.PrometheusRule {
	t.Helper()
	args := []string{"--set", "exporter.s3BucketName=" + bucket, "--set", "prometheusRule.enabled=true"}
	if len(clusters) == 1 {
		args = append(args, "--set", "exporter.clusterId="+arnOf(clusters[0]))
	} else {
		for i, c := range clusters {
			args = append(args, "--set", fmt.Sprintf("exporter.clusterArns.kc-%d=%s", i, arnOf(c)))
		}
	}
	rd := render(t, args...)
	if len(rd.prometheusRules) != 1 {
		t.Fatalf("%d PrometheusRules rendered, want 1", len(rd.prometheusRules))
	}
	return rd.prometheusRules[0]
}

func arnOf(cluster string) string { return "arn:aws:eks:us-east-1:111122223333:cluster/" + cluster }

// TestPromtoolCheckRules: the rendered rules pass `promtool check rules`
// (syntax, types, templates) with the defaults, full-values.yaml and a
// federated map.
func TestPromtoolCheckRules(t *testing.T) {
	t.Parallel()
	promtool(t)
	for name, pr := range map[string]*monitoringv1.PrometheusRule{
		"default":   ruleFor(t, []string{"prod"}),
		"federated": ruleFor(t, fleet),
		"full":      render(t, withRequired("--values", "ci/full-values.yaml")...).prometheusRules[0],
	} {
		dir := t.TempDir()
		writeYAML(t, dir, "rules.yaml", rulesOf(pr, true))
		out := runPromtool(t, dir, "check", "rules", "--lint=all", "--lint-fatal", "rules.yaml")
		t.Logf("%s: %s", name, out)
	}
}

// TestAlertScenarios runs every scenario in promtool's rule engine.
func TestAlertScenarios(t *testing.T) {
	t.Parallel()
	promtool(t)
	rules := map[string]*monitoringv1.PrometheusRule{}
	for _, sc := range scenarios() {
		key := fmt.Sprint(sc.clusters)
		if rules[key] == nil {
			rules[key] = ruleFor(t, sc.clusters)
		}
	}
	for _, sc := range scenarios() {
		pr := rules[fmt.Sprint(sc.clusters)]
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			if out, err := testScenario(t, sc.name, sc, rulesOf(pr, false)); err != nil {
				t.Fatalf("promtool test rules: %v\n%s", err, out)
			}
		})
	}
}

// testScenario runs sc against the rules in promtool's rule engine and
// returns promtool's output, with an error when an expectation failed.
// keep names the files' directory under KSE_KEEP_PROMTOOL.
func testScenario(t *testing.T, keep string, sc scenario, all ruleFile) (string, error) {
	t.Helper()
	dir := t.TempDir()
	writeYAML(t, dir, "rules.yaml", withFor(all))
	writeYAML(t, dir, "tests.yaml", map[string]any{
		"rule_files": []string{"rules.yaml"}, "evaluation_interval": "1m",
		"tests": []any{testGroup(sc, all.Groups[0].Rules, "warning")},
	})
	// KSE_KEEP_PROMTOOL=<dir> keeps the files, to rerun promtool by hand.
	if root := os.Getenv("KSE_KEEP_PROMTOOL"); root != "" {
		if err := os.CopyFS(filepath.Join(root, keep), os.DirFS(dir)); err != nil {
			t.Log(err)
		}
	}
	cmd := exec.CommandContext(t.Context(), promtool(t), "test", "rules", "tests.yaml")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAlertAnnotations runs all four alerts as alerting rules and checks
// their texts as Alertmanager receives them, rendered by Prometheus'
// template engine: the values, the units and the grammar ("1 day is",
// never "1 days"). The runs are hourly here, to keep the evaluation short:
// the rules count runs, whatever the schedule.
func TestAlertAnnotations(t *testing.T) {
	t.Parallel()
	promtool(t)
	hourly := func(n int, ok bool, missing int) push {
		return push{at: n*hour + 5, cluster: "prod", run: "kse-h" + strconv.Itoa(n), start: n * hour, ok: ok, missing: missing}
	}
	type expect struct {
		alert, cluster       string
		summary, description string
	}
	cases := []struct {
		sc   scenario
		at   int
		want []expect
	}{{
		sc: scenario{name: "three failed runs after a success", clusters: []string{"prod"},
			pushes: []push{hourly(0, true, 0), hourly(1, false, 2), hourly(2, false, 2), hourly(3, false, 2)}},
		at: after(5),
		want: []expect{{
			noRecent, "prod",
			"No successful Kubecost export for cluster prod in more than 30 hours",
			"kubecost-s3-exporter has not completed a successful run for cluster prod in 1d 6h 1m 0s (since its last success, or since its first run when none succeeded). Check the CronJob's recent Jobs and their logs.",
		}, {
			hole, "prod",
			"The Kubecost archive of cluster prod has a hole that 2 scheduled runs did not fill",
			"2 days of the backfill window are still missing from the archive after 2 scheduled runs. A day that leaves Kubecost's retention before it is exported is lost.",
		}, {
			failing, "prod",
			"kubecost-s3-exporter failed 3 scheduled runs in a row for cluster prod",
			"The last 3 scheduled runs (Jobs) all failed. Read the last Job's log: its last line is the run summary with the error.",
		}},
	}, {
		sc: scenario{name: "one day missing through two runs", clusters: []string{"prod"},
			pushes: []push{hourly(0, false, 1), hourly(1, true, 1)}},
		at: hour + 5,
		want: []expect{{
			hole, "prod",
			"The Kubecost archive of cluster prod has a hole that 2 scheduled runs did not fill",
			"1 day of the backfill window is still missing from the archive after 2 scheduled runs. A day that leaves Kubecost's retention before it is exported is lost.",
		}},
	}, {
		sc: scenario{name: "nothing ever pushed", clusters: []string{"prod"}}, at: noSuccess,
		want: []expect{{
			absent, "prod",
			"No kubecost-s3-exporter metrics for cluster prod in 30 hours",
			"Prometheus has had no series pushed by kubecost-s3-exporter for this cluster for the whole period: no run pushed since the Pushgateway lost its groups (a restart without persistence), the CronJob is suspended or deleted, PUSHGATEWAY_URL is unset or wrong, or Prometheus does not scrape the Pushgateway with honor_labels.",
		}},
	}}
	pr := ruleFor(t, []string{"prod"})
	for _, tc := range cases {
		tc.sc.end = tc.at
		t.Run(tc.sc.name, func(t *testing.T) {
			t.Parallel()
			var tests []map[string]any
			for _, a := range alertNames4 {
				exp := []map[string]any{}
				for _, w := range tc.want {
					if w.alert == a {
						exp = append(exp, map[string]any{
							"exp_labels":      map[string]string{"job": pgJob, "cluster": w.cluster, "severity": "warning"},
							"exp_annotations": map[string]string{"summary": w.summary, "description": w.description},
						})
					}
				}
				tests = append(tests, map[string]any{"eval_time": strconv.Itoa(tc.at) + "m", "alertname": a, "exp_alerts": exp})
			}
			dir := t.TempDir()
			writeYAML(t, dir, "rules.yaml", rulesOf(pr, true))
			writeYAML(t, dir, "tests.yaml", map[string]any{
				"rule_files": []string{"rules.yaml"}, "evaluation_interval": "1m",
				"tests": []any{map[string]any{"name": tc.sc.name, "interval": "1m", "input_series": seriesOf(tc.sc), "alert_rule_test": tests}},
			})
			runPromtool(t, dir, "test", "rules", "tests.yaml")
		})
	}
}
