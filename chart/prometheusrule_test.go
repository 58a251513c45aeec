package chart_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
)

// alertNames are the alerts the chart documents; README.md describes each.
var alertNames = []string{"KubecostS3ExporterNoRecentSuccess", "KubecostS3ExporterArchiveHole", "KubecostS3ExporterFailing", "KubecostS3ExporterMetricsAbsent"}

// exporterMetrics are the metric names exporter/metrics pushes that the
// rules may use.
var exporterMetrics = []string{
	"kubecost_s3_exporter_last_success_timestamp_seconds",
	"kubecost_s3_exporter_archive_missing_days",
	"kubecost_s3_exporter_last_run_start_timestamp_seconds",
	"kubecost_s3_exporter_last_run_success",
	"kubecost_s3_exporter_run_start_timestamp_seconds",
	"kubecost_s3_exporter_last_archive_complete_timestamp_seconds",
	"kubecost_s3_exporter_last_backlog_progress_timestamp_seconds",
}

// TestPrometheusRuleOffByDefault: the CRD may not exist in the cluster.
func TestPrometheusRuleOffByDefault(t *testing.T) {
	t.Parallel()
	if n := len(render(t, required...).prometheusRules); n != 0 {
		t.Fatalf("default values render %d PrometheusRules, want 0", n)
	}
}

// TestPrometheusRule renders the rule with the default settings and with
// full-values.yaml, decodes it strictly into the prometheus-operator type
// (in render), parses every expression with the Prometheus parser, and
// checks that the rules use the settings and only metrics the exporter pushes.
func TestPrometheusRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args                 []string
		failedRuns, severity string
		window               string
	}{
		{withRequired("--set", "prometheusRule.enabled=true"), "3", "warning", "7d"},
		{withRequired("--values", "ci/full-values.yaml"), "2", "critical", "5d"},
	}
	for _, tc := range cases {
		rd := render(t, tc.args...)
		if len(rd.prometheusRules) != 1 {
			t.Fatalf("%v: %d PrometheusRules, want 1", tc.args, len(rd.prometheusRules))
		}
		pr := rd.prometheusRules[0]
		if pr.Namespace != namespace || pr.Labels["app.kubernetes.io/instance"] != release {
			t.Errorf("metadata %s/%s labels %v", pr.Namespace, pr.Name, pr.Labels)
		}
		var got []string
		for _, g := range pr.Spec.Groups {
			for _, rule := range g.Rules {
				got = append(got, rule.Alert)
				expr, err := parser.ParseExpr(rule.Expr.String())
				if err != nil {
					t.Errorf("%s: %q does not parse: %v", rule.Alert, rule.Expr.String(), err)
					continue
				}
				if expr.Type() != parser.ValueTypeVector {
					t.Errorf("%s: expression of type %s, want a vector", rule.Alert, expr.Type())
				}
				for _, sel := range parser.ExtractSelectors(expr) {
					for _, m := range sel {
						if m.Name == model.MetricNameLabel && !slices.Contains(exporterMetrics, m.Value) {
							t.Errorf("%s uses %s, which the exporter does not push", rule.Alert, m.Value)
						}
						if m.Name == "job" && m.Value != "kubecost-s3-exporter" {
							t.Errorf("%s selects job=%q", rule.Alert, m.Value)
						}
						// Only the chart's own cluster: several releases
						// sharing a Prometheus do not alert twice.
						if m.Name == "cluster" && m.Value != "prod" {
							t.Errorf("%s selects cluster %s %q, want the clusterId's name prod", rule.Alert, m.Type, m.Value)
						}
					}
				}
				if rule.For != nil {
					if _, err := model.ParseDuration(string(*rule.For)); err != nil {
						t.Errorf("%s: for %q: %v", rule.Alert, *rule.For, err)
					}
				}
				if rule.Labels["severity"] != tc.severity {
					t.Errorf("%s: severity %q, want %q", rule.Alert, rule.Labels["severity"], tc.severity)
				}
				for _, k := range []string{"summary", "description"} {
					if rule.Annotations[k] == "" {
						t.Errorf("%s has no %s annotation", rule.Alert, k)
					}
				}
				if rule.Alert == "KubecostS3ExporterFailing" && !strings.HasSuffix(rule.Expr.String(), ">= "+tc.failedRuns) {
					t.Errorf("KubecostS3ExporterFailing does not use failedRuns %s: %s", tc.failedRuns, rule.Expr.String())
				}
				parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
					if ms, ok := n.(*parser.MatrixSelector); ok {
						if want, _ := model.ParseDuration(tc.window); model.Duration(ms.Range) != want {
							t.Errorf("%s reads %s of history, want lookback %s", rule.Alert, model.Duration(ms.Range), tc.window)
						}
					}
					return nil
				})
			}
		}
		if !slices.Equal(got, alertNames) {
			t.Errorf("alerts %v, want %v", got, alertNames)
		}
	}
}

// TestAlertsDocumented: every alert has a section in README.md that says
// what to do.
func TestAlertsDocumented(t *testing.T) {
	section := readmeSection(t, "Alerts")
	seen := map[string]bool{}
	for _, part := range strings.Split(section, "\n### ")[1:] {
		name, body, _ := strings.Cut(part, "\n")
		name = strings.TrimSpace(name)
		seen[name] = true
		if !strings.Contains(body, "What to do") {
			t.Errorf("README.md alert %s does not say what to do", name)
		}
	}
	for _, a := range alertNames {
		if !seen[a] {
			t.Errorf("README.md does not document alert %s (sections: %v)", a, slices.Collect(maps.Keys(seen)))
		}
	}
}
