package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
)

// archive exports the simulator's days for clusters prod and prod-eu into
// a directory, then deletes prod's file of 2026-11-15 to make a hole.
func archive(t *testing.T) string {
	t.Helper()
	sim := newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 15})
	dir := t.TempDir()
	for _, arn := range []string{clusterARN, clusterARN + "-eu"} {
		env := map[string]string{
			"OUTPUT_DIR": dir, "CLUSTER_ID": arn, "KUBECOST_API_ENDPOINT": sim.URL,
			"BACKFILL_PERIOD_DAYS": "20", "LABELS": labelKey, "LOG_FORMAT": "json",
		}
		if code, logs := runEnv(env, nil); code != cli.ExitOK {
			t.Fatalf("export %s: exit %d\n%s", arn, code, logs)
		}
	}
	hole := filepath.Join(dir, "account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-15_prod.snappy.parquet")
	if err := os.Remove(hole); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mainCmd(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), args, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &stdout, &stderr); code != cli.ExitOK {
		t.Fatalf("%v: exit %d\n%s%s", args, code, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// makeReport writes the report of dir for 2026-11-01..21, as of 2026-11-21
// with a 10-day backfill window, and returns the HTML.
func makeReport(t *testing.T, env map[string]string, src ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.html")
	args := append([]string{"report"}, src...)
	args = append(args, "-from", "2026-11-01", "-to", "2026-11-21", "-today", "2026-11-21", "-backfill-days", "10", "-o", out)
	if msg := mainCmd(t, env, args...); !strings.Contains(msg, out) {
		t.Errorf("report does not print its path: %q", msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	reportRow   = regexp.MustCompile(`<tr data-namespace="([^"]*)"><t[dh]>[^<]*</t[dh]><t[dh] class="num cost">([0-9.-]+)</t[dh]>`)
	summaryRow  = regexp.MustCompile(`(?m)^  (.+?)\s+(-?[0-9]+\.[0-9]{2})(?:\s+[0-9.]+%)?$`)
	summaryHead = regexp.MustCompile(`cost per namespace over ([0-9]+) files, ([0-9]+) rows`)
	calCell     = regexp.MustCompile(`data-day="([0-9-]+)" data-cluster="([^"]+)" data-state="([a-z-]+)"`)
)

func reportCosts(t *testing.T, page string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range reportRow.FindAllStringSubmatch(page, -1) {
		out[m[1]] = m[2]
	}
	if len(out) < 3 {
		t.Fatalf("report has %d namespace rows", len(out))
	}
	return out
}

// TestReportMatchesSummary: the report's cost per namespace, total, file
// and row counts are the summary command's, for the same files.
func TestReportMatchesSummary(t *testing.T) {
	dir := archive(t)
	page := makeReport(t, nil, "-dir", dir)
	sum := mainCmd(t, nil, "summary", dir)

	want := map[string]string{}
	_, section, _ := strings.Cut(sum, "cost per namespace over")
	for _, m := range summaryRow.FindAllStringSubmatch(section, -1) {
		want[strings.TrimSpace(m[1])] = m[2]
	}
	if got := reportCosts(t, page); !maps.Equal(got, want) {
		t.Errorf("report costs differ from summary\nreport:  %v\nsummary: %v", got, want)
	}
	head := summaryHead.FindStringSubmatch(sum)
	if head == nil {
		t.Fatalf("summary has no totals line:\n%s", sum)
	}
	for id, v := range map[string]string{"files": head[1], "rows": head[2]} {
		if !strings.Contains(page, `<span id="`+id+`">`+v+`</span>`) {
			t.Errorf("report does not show %s = %s", id, v)
		}
	}
}

// TestReportCalendar: every cluster and day of the range is classified.
func TestReportCalendar(t *testing.T) {
	page := makeReport(t, nil, "-dir", archive(t))
	got := map[string]string{}
	for _, m := range calCell.FindAllStringSubmatch(page, -1) {
		got[m[2]+" "+m[1]] = m[3]
	}
	if len(got) != 2*21 {
		t.Fatalf("%d calendar cells, want 2 clusters x 21 days", len(got))
	}
	// The simulator keeps 15 days and the exporter's window ended on the
	// 18th (the last day that ended 48 hours before the run). The report
	// takes Kubecost's retention to be 15 days before the 21st: from the
	// 6th on, a day the archive lacks is missing; before, Kubecost has none.
	for _, c := range []string{"prod", "prod-eu"} {
		for d := 1; d <= 21; d++ {
			day := time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
			var want string
			switch {
			case c == "prod" && d == 15:
				want = "missing"
			case d >= 19:
				want = "pending"
			case d >= 6:
				want = "stored"
			default:
				want = "no-kubecost-data"
			}
			if got[c+" "+day] != want {
				t.Errorf("%s %s: %s, want %s", c, day, got[c+" "+day], want)
			}
		}
	}
}

// TestReportFromS3: the same archive in MinIO gives the same report as in
// a directory; the S3 store is only listed and read.
func TestReportFromS3(t *testing.T) {
	h := newHarness(t)
	if code, logs := h.run(nil); code != cli.ExitOK {
		t.Fatalf("export to S3: exit %d\n%s", code, logs)
	}
	before := h.objects()
	env := maps.Clone(h.env)
	env["AWS_REGION"] = "us-east-1"
	s3page := makeReport(t, env, "-bucket", bucket)

	sim := newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 15})
	dir := t.TempDir()
	denv := map[string]string{"OUTPUT_DIR": dir, "CLUSTER_ID": clusterARN, "KUBECOST_API_ENDPOINT": sim.URL,
		"BACKFILL_PERIOD_DAYS": "20", "LABELS": labelKey, "LOG_FORMAT": "json"}
	var logs bytes.Buffer
	if code := cli.RunWith(context.Background(), func(k string) (string, bool) { v, ok := denv[k]; return v, ok },
		&logs, cli.Hooks{Now: func() time.Time { return now }}); code != cli.ExitOK {
		t.Fatalf("export to dir: exit %d\n%s", code, logs.String())
	}
	dirPage := makeReport(t, nil, "-dir", dir)
	if a, b := reportCosts(t, s3page), reportCosts(t, dirPage); !maps.Equal(a, b) {
		t.Errorf("S3 report %v\ndir report %v", a, b)
	}
	if after := h.objects(); !maps.Equal(before, after) {
		t.Error("the report changed the bucket")
	}
}

// checkScript runs in the page after load and writes what it found into
// the DOM, where --dump-dom shows it: every chart's SVG, its number of
// marks and their drawn area, and every error the page raised.
const checkScript = `<script>
window.__errors = [];
addEventListener('error', e => __errors.push('error: ' + (e.message || (e.target && (e.target.src || e.target.href)) || e.type)), true);
addEventListener('securitypolicyviolation', e => __errors.push('csp: ' + e.blockedURI + ' ' + e.violatedDirective));
for (const k of ['error', 'warn']) { const f = console[k]; console[k] = (...a) => { __errors.push('console.' + k + ': ' + a.join(' ')); f.apply(console, a); }; }
addEventListener('load', () => {
  const charts = [...document.querySelectorAll('svg.chart')].map(s => {
    const marks = [...s.querySelectorAll('.mark')];
    const area = marks.reduce((t, m) => { const r = m.getBoundingClientRect(); return t + r.width * r.height; }, 0);
    const box = s.getBoundingClientRect();
    return {name: s.dataset.chart, marks: marks.length, area: area, width: box.width, height: box.height};
  });
  const pre = document.createElement('pre');
  pre.id = 'kse-check';
  pre.textContent = JSON.stringify({charts: charts, errors: __errors});
  document.body.appendChild(pre);
});
</script>`

func chromiumArgs(t *testing.T) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--hide-scrollbars"}
}

// TestReportInBrowser opens the report in headless Chromium (Debian's
// package, from .ci/install-tools.sh), checks that every chart drew marks
// and that the page raised no error, and saves a screenshot.
func TestReportInBrowser(t *testing.T) {
	chromium := tooltest.Require(t, "chromium", "CHROMIUM_BIN")
	page := makeReport(t, nil, "-dir", archive(t))

	// The page forbids scripts; the probe's copy allows inline ones only.
	probe := strings.Replace(page, "script-src 'none'", "script-src 'unsafe-inline'", 1)
	probe = strings.Replace(probe, "<head>", "<head>\n"+checkScript, 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "probe.html")
	if err := os.WriteFile(path, []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, append(chromiumArgs(t), "--virtual-time-budget=5000", "--dump-dom", "file://"+path)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`(?s)<pre id="kse-check">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe wrote no result; chromium said:\n%s", stderr.String())
	}
	var res struct {
		Charts []struct {
			Name                string
			Marks               int
			Area, Width, Height float64
		}
		Errors []string
	}
	raw := strings.NewReplacer("&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(string(m[1]))
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatalf("probe result %q: %v", raw, err)
	}
	if len(res.Errors) > 0 {
		t.Errorf("the page raised errors: %q", res.Errors)
	}
	var names []string
	for _, c := range res.Charts {
		names = append(names, c.Name)
		if c.Marks == 0 || c.Area <= 0 || c.Width < 100 || c.Height < 20 {
			t.Errorf("chart %s did not render data: %+v", c.Name, c)
		}
	}
	want := []string{"completeness", "daily-namespace-prod", "daily-namespace-prod-eu", "daily-cluster",
		"top-workloads", "efficiency", "label-" + labelKey}
	if !slices.Equal(names, want) {
		t.Errorf("charts %q, want %q", names, want)
	}

	// The screenshot is of the page as shipped, CSP and all.
	shipped := filepath.Join(dir, "report.html")
	if err := os.WriteFile(shipped, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	cmd = exec.CommandContext(ctx, chromium, append(chromiumArgs(t), "--window-size=1100,2400", "--screenshot="+shot, "file://"+shipped)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	t.Logf("screenshot: %s", shot)
}
