package e2e_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// runMain runs the command and returns its exit status and output.
func runMain(env map[string]string, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = cli.Main(context.Background(), args, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &o, &e)
	return code, o.String(), e.String()
}

// TestReportCLIErrors: each way a user can point the report at nothing
// exits non-zero with a line that says what is wrong, and -h is help.
func TestReportCLIErrors(t *testing.T) {
	dir := archive(t)
	missing := filepath.Join(t.TempDir(), "nonexistent")
	empty := t.TempDir()
	cases := []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"missing dir", []string{"-dir", missing}, cli.ExitRuntime, []string{missing, "no such directory"}},
		{"empty dir", []string{"-dir", empty}, cli.ExitRuntime, []string{empty, "no day files"}},
		{"unknown cluster", []string{"-dir", dir, "-cluster", "nosuch"}, cli.ExitRuntime, []string{"nosuch", "prod, prod-eu"}},
		{"help", []string{"-h"}, cli.ExitOK, []string{"-dir", "-settle-hours", "-currency", "-object-store-config-file", "$OBJECT_STORE_CONFIG_FILE"}},
		{"long help", []string{"--help"}, cli.ExitOK, []string{"-kubecost-retention-days"}},
		{"backfill below the exporter's minimum", []string{"-dir", dir, "-backfill-days", "1"}, cli.ExitConfig, []string{`-backfill-days="1" is invalid`, "from 3 to"}},
		{"settle beyond the exporter's maximum", []string{"-dir", dir, "-settle-hours", "721"}, cli.ExitConfig, []string{"from 0 to 720"}},
		{"bad output path", []string{"-dir", dir, "-o", "/nonexistent-dir/r.html"}, cli.ExitRuntime, []string{"/nonexistent-dir/r.html", "no such file or directory"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runMain(nil, append([]string{"report"}, c.args...)...)
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s%s", code, c.code, stdout, stderr)
			}
			for _, s := range c.says {
				if !strings.Contains(stdout+stderr, s) {
					t.Errorf("output does not say %q:\n%s%s", s, stdout, stderr)
				}
			}
			if strings.Contains(stderr, ".report-") {
				t.Errorf("names the temp file: %s", stderr)
			}
		})
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("the report created %s", missing)
	}
}

// TestReportPendingFollowsSettle: for SETTLE_HOURS 24 and 72 the report
// calls pending exactly the days after the exporter's newest planned day.
func TestReportPendingFollowsSettle(t *testing.T) {
	counts := map[int]int{}
	for _, settle := range []int{24, 72} {
		sim := newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 15})
		dir := t.TempDir()
		env := map[string]string{"OUTPUT_DIR": dir, "CLUSTER_ID": clusterARN, "KUBECOST_API_ENDPOINT": sim.URL,
			"BACKFILL_PERIOD_DAYS": "10", "SETTLE_HOURS": strconv.Itoa(settle), "LOG_FORMAT": "json"}
		code, logs := runEnv(env, nil)
		if code != cli.ExitOK {
			t.Fatalf("export: exit %d\n%s", code, logs)
		}
		var newest string
		for d := range planReasons(t, logs) {
			newest = max(newest, d)
		}
		// The report is told the exporter's settings the way a user would:
		// SETTLE_HOURS from the environment, the run's time with -today.
		out := filepath.Join(t.TempDir(), "r.html")
		mainCmd(t, map[string]string{"SETTLE_HOURS": strconv.Itoa(settle), "BACKFILL_PERIOD_DAYS": "10"},
			"report", "-dir", dir, "-from", "2026-11-10", "-to", "2026-11-21", "-today", now.Format(time.RFC3339), "-o", out)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		cells := calCell.FindAllStringSubmatch(string(b), -1)
		if len(cells) != 12 || newest == "" {
			t.Fatalf("SETTLE_HOURS=%d: %d cells, newest planned day %q", settle, len(cells), newest)
		}
		for _, m := range cells {
			if pending := m[3] == "pending"; pending != (m[1] > newest) {
				t.Errorf("SETTLE_HOURS=%d: %s is %s, the exporter's newest day is %s", settle, m[1], m[3], newest)
			}
			if m[3] == "pending" {
				counts[settle]++
			}
		}
		_, last := exporter.Window(now, 10, time.Duration(settle)*time.Hour)
		if newest != last.Format(time.DateOnly) {
			t.Errorf("SETTLE_HOURS=%d: the exporter planned up to %s, its window ends %s", settle, newest, last.Format(time.DateOnly))
		}
	}
	if counts[72]-counts[24] != 2 {
		t.Errorf("pending days: %v; 72 hours should hold back two days more than 24", counts)
	}
}

var (
	svgRE  = regexp.MustCompile(`(?s)<svg [^>]*data-chart="([^"]+)"[^>]*>.*?</svg>`)
	tagRE  = regexp.MustCompile(`<(rect|circle|text)( [^>]*)>([^<]*)`)
	attrRE = regexp.MustCompile(` ([a-zA-Z-]+)="([^"]*)"`)
)

type tag struct {
	name, text string
	attr       map[string]string
}

// charts splits the page into its charts' tags, by chart name.
func charts(page string) (map[string][]tag, map[string]map[string]string) {
	out, svgAttrs := map[string][]tag{}, map[string]map[string]string{}
	for _, m := range svgRE.FindAllStringSubmatch(page, -1) {
		head := m[0][:strings.IndexByte(m[0], '>')]
		svgAttrs[m[1]] = attrs(head)
		for _, t := range tagRE.FindAllStringSubmatch(m[0], -1) {
			out[m[1]] = append(out[m[1]], tag{t[1], t[3], attrs(t[2])})
		}
	}
	return out, svgAttrs
}

func attrs(s string) map[string]string {
	a := map[string]string{}
	for _, m := range attrRE.FindAllStringSubmatch(s, -1) {
		a[m[1]] = m[2]
	}
	return a
}

func f64(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// TestReportForFinOps reads the report of a two-cluster archive the way a
// FinOps reader does: colours, currency, axes, efficiency, calendar, gaps.
func TestReportForFinOps(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.html")
	mainCmd(t, nil, "report", "-dir", archive(t), "-from", "2026-11-01", "-to", "2026-11-21", "-today", "2026-11-21",
		"-backfill-days", "10", "-currency", "EUR", "-o", out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	tags, svgs := charts(page)
	money := []string{"daily-namespace-prod", "daily-namespace-prod-eu", "daily-cluster"}

	t.Run("idle is a line named Idle", func(t *testing.T) {
		if !strings.Contains(page, `<tr data-namespace="Idle"><td>Idle</td>`) || strings.Contains(page, "(none)") {
			t.Error(`the namespace table has no "Idle" row, or still says "(none)"`)
		}
	})
	t.Run("one colour per namespace", func(t *testing.T) {
		colour := map[string]map[string]bool{}
		note := func(ns, fill string) {
			if colour[ns] == nil {
				colour[ns] = map[string]bool{}
			}
			colour[ns][fill] = true
		}
		for _, c := range []string{"daily-namespace-prod", "daily-namespace-prod-eu", "efficiency"} {
			for _, tg := range tags[c] {
				if ns, ok := tg.attr["data-series"]; ok {
					note(ns, tg.attr["fill"])
				}
				if ns, ok := tg.attr["data-namespace"]; ok && tg.name != "text" {
					note(ns, tg.attr["fill"])
				}
			}
		}
		owner := map[string]string{}
		for ns, fills := range colour {
			if len(fills) != 1 {
				t.Errorf("namespace %s drawn in %d colours: %v", ns, len(fills), fills)
			}
			for f := range fills {
				if o, ok := owner[f]; ok && ns != "(other)" && o != "(other)" {
					t.Errorf("namespaces %s and %s share colour %s", ns, o, f)
				}
				owner[f] = ns
			}
		}
		if len(colour) < 4 || colour["Idle"] == nil {
			t.Errorf("colours of %d namespaces, Idle among them: %v", len(colour), colour)
		}
	})
	t.Run("currency in totals and axes", func(t *testing.T) {
		if !strings.Contains(page, `</span> <span class="currency">EUR</span>`) || !strings.Contains(page, "TOTAL (EUR)") {
			t.Error("the total does not show the currency")
		}
		if strings.Contains(page, "USD") {
			t.Error("USD shown though -currency is EUR")
		}
		for _, c := range append(money, "efficiency") {
			var titles []string
			for _, tg := range tags[c] {
				if strings.Contains(tg.attr["class"], "axis-title") {
					titles = append(titles, tg.text)
				}
			}
			if !strings.Contains(strings.Join(titles, " "), "(EUR)") {
				t.Errorf("%s: axis titles %q lack the currency", c, titles)
			}
		}
		for _, tg := range tags["top-workloads"] {
			if tg.attr["class"] == "value" && !strings.HasSuffix(tg.text, " EUR") {
				t.Errorf("top-workloads value %q without currency", tg.text)
			}
		}
	})
	t.Run("round ticks, maximum within 25% of the data", func(t *testing.T) {
		for _, c := range money {
			perDay := map[string]float64{}
			var ticks []float64
			for _, tg := range tags[c] {
				if tg.attr["class"] == "mark" {
					perDay[tg.attr["data-day"]] += f64(t, tg.attr["data-value"])
				}
				if tg.attr["class"] == "tick" {
					ticks = append(ticks, f64(t, tg.attr["data-value"]))
				}
			}
			var peak float64
			for _, v := range perDay {
				peak = math.Max(peak, v)
			}
			top, step := f64(t, svgs[c]["data-axis-max"]), f64(t, svgs[c]["data-axis-step"])
			if peak == 0 || top < peak || top > 1.25*peak {
				t.Errorf("%s: axis to %v for a peak of %v", c, top, peak)
			}
			mant := step / math.Pow(10, math.Floor(math.Log10(step)))
			if !slicesHas([]float64{1, 2, 5}, mant) {
				t.Errorf("%s: tick step %v is not round", c, step)
			}
			if len(ticks) < 5 || ticks[len(ticks)-1] != top {
				t.Errorf("%s: ticks %v, axis max %v", c, ticks, top)
			}
			for _, v := range ticks {
				if r := v / step; math.Abs(r-math.Round(r)) > 1e-6 {
					t.Errorf("%s: tick %v not a multiple of %v", c, v, step)
				}
			}
		}
	})
	t.Run("labelled efficiency points without idle", func(t *testing.T) {
		points, labels := map[string]int{}, map[string]int{}
		var xTitle, legend []string
		for _, tg := range tags["efficiency"] {
			switch {
			case strings.Contains(tg.attr["class"], "point-label"):
				labels[tg.attr["data-namespace"]]++
				if tg.text == "" {
					t.Error("a point label is empty")
				}
			case strings.Contains(tg.attr["class"], "point"):
				points[tg.attr["data-namespace"]]++
			case strings.Contains(tg.attr["class"], "x-axis-title"):
				xTitle = append(xTitle, tg.text)
			case tg.attr["class"] == "legend":
				legend = append(legend, tg.text)
			}
		}
		if len(points) < 3 || len(xTitle) != 1 {
			t.Fatalf("points %v, x-axis title %q", points, xTitle)
		}
		for ns, n := range points {
			if labels[ns] != n {
				t.Errorf("%s: %d points, %d labels", ns, n, labels[ns])
			}
		}
		if points["Idle"] > 0 {
			t.Error("idle cost is in the efficiency chart")
		}
		for _, l := range legend {
			if strings.HasSuffix(l, "…") {
				t.Errorf("legend cut: %q", l)
			}
		}
	})
	t.Run("three calendar states, every day labelled", func(t *testing.T) {
		got := map[string]string{}
		for _, m := range calCell.FindAllStringSubmatch(page, -1) {
			got[m[2]+" "+m[1]] = m[3]
		}
		for cell, want := range map[string]string{
			"prod 2026-11-03":    "no-kubecost-data", // before Kubecost's 15 days
			"prod 2026-11-15":    "missing",          // Kubecost has it, the archive does not
			"prod 2026-11-10":    "stored",
			"prod-eu 2026-11-15": "stored",
		} {
			if got[cell] != want {
				t.Errorf("%s: %q, want %q", cell, got[cell], want)
			}
		}
		var days int
		for _, tg := range tags["completeness"] {
			if tg.attr["class"] == "day-label" {
				days++
			}
		}
		if days != 21 {
			t.Errorf("%d day labels for 21 days", days)
		}
	})
	t.Run("a missing day is marked in the bar charts", func(t *testing.T) {
		gap := func(chart, day string) string {
			for _, tg := range tags[chart] {
				if tg.attr["class"] == "gap" && tg.attr["data-day"] == day {
					return tg.attr["data-state"]
				}
			}
			return ""
		}
		for chart, want := range map[string]string{"daily-namespace-prod": "missing", "daily-cluster": "missing", "daily-namespace-prod-eu": ""} {
			if got := gap(chart, "2026-11-15"); got != want {
				t.Errorf("%s on 2026-11-15: gap %q, want %q", chart, got, want)
			}
		}
		if got := gap("daily-namespace-prod", "2026-11-03"); got != "no-kubecost-data" {
			t.Errorf("daily-namespace-prod on 2026-11-03: gap %q, want no-kubecost-data", got)
		}
	})
}

func slicesHas(s []float64, v float64) bool {
	for _, x := range s {
		if math.Abs(x-v) < 1e-9 {
			return true
		}
	}
	return false
}

// TestReportConfigErrorsAsRun: a bad variable or flag fails the report as
// the same variable fails the run: exit 2, one line naming it.
func TestReportConfigErrorsAsRun(t *testing.T) {
	dir := archive(t)
	for _, tc := range []struct {
		env  map[string]string
		args []string
		says string
	}{
		{map[string]string{"SETTLE_HOURS": "abc"}, nil, `SETTLE_HOURS="abc" is invalid: accepted: an integer`},
		{map[string]string{"BACKFILL_PERIOD_DAYS": "2"}, nil, `BACKFILL_PERIOD_DAYS="2" is invalid: accepted: an integer from 3 to 3650`},
		{map[string]string{"LOG_LEVEL": "loud"}, nil, `LOG_LEVEL="loud" is invalid: accepted: debug, info, warn, error`},
		{nil, []string{"-settle-hours", "abc"}, `-settle-hours="abc" is invalid: accepted: an integer`},
	} {
		env := map[string]string{"CLUSTER_ID": "arn:aws:eks:us-east-1:111122223333:cluster/prod", "OUTPUT_DIR": dir}
		for k, v := range tc.env {
			env[k] = v
		}
		for _, args := range [][]string{{"run"}, append([]string{"report", "-dir", dir}, tc.args...)} {
			if len(tc.args) > 0 && args[0] == "run" {
				continue // flags are the report's own
			}
			code, _, stderr := runMain(env, args...)
			if code != cli.ExitConfig || !strings.Contains(stderr, tc.says) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("%s with %v: exit %d, want %d and one line saying %q:\n%s", args[0], tc.env, code, cli.ExitConfig, tc.says, stderr)
			}
		}
	}
}
