package report_test

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

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// twoProds exports three clusters into one directory: prod in account
// 111122223333, prod in account 444455556666 (another simulated cluster,
// so other costs) and prod-eu, as a multi-account archive holds them.
func twoProds(t *testing.T, now time.Time) string {
	t.Helper()
	dir := t.TempDir()
	for i, arn := range []string{"arn:aws:eks:us-east-1:111122223333:cluster/prod",
		"arn:aws:eks:us-east-1:444455556666:cluster/prod", "arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu"} {
		sim := kubecostsim.NewServer(kubecostsim.Config{Seed: int64(3 + 2*i), RetentionDays: 3, Now: func() time.Time { return now }})
		env := map[string]string{"OUTPUT_DIR": dir, "CLUSTER_ID": arn, "KUBECOST_API_ENDPOINT": sim.URL, "LOG_FORMAT": "json"}
		var logs bytes.Buffer
		code := cli.RunWith(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			&logs, cli.Hooks{Now: func() time.Time { return now }})
		sim.Close()
		if code != cli.ExitOK {
			t.Fatalf("export %s: exit %d\n%s", arn, code, logs.String())
		}
	}
	return dir
}

var (
	chartRE = regexp.MustCompile(`(?s)<svg [^>]*data-chart="([^"]+)"[^>]*>(.*?)</svg>`)
	markRE  = regexp.MustCompile(`<rect class="mark" data-day="([0-9-]+)" data-series="([^"]*)" data-value="([^"]+)"`)
	cellRE  = regexp.MustCompile(`data-day="([0-9-]+)" data-cluster="([^"]+)" data-state="([a-z-]+)" data-account="([0-9]+)" data-region="([a-z0-9-]+)"`)
)

// chartTotals sums each chart's marks per day and series.
func chartTotals(page string) map[string]map[string]map[string]float64 {
	out := map[string]map[string]map[string]float64{}
	for _, c := range chartRE.FindAllStringSubmatch(page, -1) {
		byDay := map[string]map[string]float64{}
		for _, m := range markRE.FindAllStringSubmatch(c[2], -1) {
			v, _ := strconv.ParseFloat(m[3], 64)
			if byDay[m[1]] == nil {
				byDay[m[1]] = map[string]float64{}
			}
			byDay[m[1]][m[2]] += v
		}
		out[c[1]] = byDay
	}
	return out
}

// TestClustersApartEverywhere: two clusters named prod in two accounts
// are two clusters in every section and count of the report, not only in
// the bill's: the summary line counts 3, the calendar has a row for each,
// and the daily cost per cluster has each prod's own cost (the sum of its
// own per-namespace chart), labelled with its account where names collide.
func TestClustersApartEverywhere(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	dir := twoProds(t, now)
	out := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr bytes.Buffer
	args := []string{"report", "-dir", dir, "-today", "2026-11-21", "-o", out}
	if code := cli.Main(context.Background(), args, func(string) (string, bool) { return "", false }, &stdout, &stderr); code != cli.ExitOK {
		t.Fatalf("report: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), " 3 clusters ->") {
		t.Errorf("the report's line does not count 3 clusters: %q", stdout.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)

	rows := map[string]bool{}
	for _, m := range cellRE.FindAllStringSubmatch(page, -1) {
		rows[m[4]+"/"+m[5]+"/"+m[2]] = true
	}
	want := []string{"111122223333/us-east-1/prod", "444455556666/us-east-1/prod", "111122223333/eu-west-1/prod-eu"}
	if len(rows) != 3 {
		t.Errorf("the calendar has rows %v, want %v", rows, want)
	}
	for _, w := range want {
		if !rows[w] {
			t.Errorf("the calendar has no row of %s", w)
		}
	}

	charts := chartTotals(page)
	perCluster := charts["daily-cluster"]
	own := map[string]string{ // the label in the per-cluster chart → the cluster's own chart
		"prod (111122223333 us-east-1)": "daily-namespace-prod-111122223333-us-east-1",
		"prod (444455556666 us-east-1)": "daily-namespace-prod-444455556666-us-east-1",
		"prod-eu":                       "daily-namespace-prod-eu",
	}
	if len(perCluster) == 0 {
		t.Fatalf("no daily cost per cluster; charts %v", len(charts))
	}
	for day, bySeries := range perCluster {
		if len(bySeries) != 3 {
			t.Errorf("%s: the per-cluster chart has series %v, want the 3 clusters", day, bySeries)
		}
		for label, chart := range own {
			var sum float64
			for _, v := range charts[chart][day] {
				sum += v
			}
			if got := bySeries[label]; sum == 0 || math.Abs(got-sum) > 1e-9*sum {
				t.Errorf("%s: %s is %v in the per-cluster chart, its own chart sums to %v", day, label, got, sum)
			}
		}
		if a, b := bySeries["prod (111122223333 us-east-1)"], bySeries["prod (444455556666 us-east-1)"]; a == b {
			t.Errorf("%s: both prods cost %v: the fixture does not tell them apart", day, a)
		}
	}
}
