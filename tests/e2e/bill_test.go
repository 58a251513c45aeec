package e2e_test

import (
	"bytes"
	"context"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
)

// billExport writes the bill of the tests' simulated cluster prod (seed 7,
// the archive's) as a CUR 2.0 export into a directory; prod-eu has none.
func billExport(t *testing.T, sim *kubecostsim.Sim) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := sim.WriteCURExport(context.Background(), dir, kubecostsim.CUROptions{ClusterARN: clusterARN}); err != nil {
		t.Fatal(err)
	}
	return dir
}

var billRow = regexp.MustCompile(`<tr class="bill-day" data-account="([^"]*)" data-region="([^"]*)" data-cluster="([^"]*)" data-day="([^"]*)" data-namespace="([^"]*)" data-kubecost="([^"]*)" data-bill="([^"]*)"[^>]* data-present="([^"]*)"`)

// billRows are the section's rows, cluster|namespace|day -> present|kubecost|bill.
func billRows(page string) map[string]string {
	out := map[string]string{}
	for _, m := range billRow.FindAllStringSubmatch(page, -1) {
		out[m[1]+"/"+m[2]+"/"+m[3]+"|"+m[5]+"|"+m[4]] = m[8] + "|" + m[6] + "|" + m[7]
	}
	return out
}

// TestReportBillSection: with -cur, the report of the archive of prod and
// prod-eu adds the section: prod's namespaces are in both, prod-eu (no
// bill) is Kubecost's only, and the simulated bill is Kubecost's compute
// with its idle at the rates of the simulator's purchase mix. Without -cur the
// page and the summary line are the report's as before.
func TestReportBillSection(t *testing.T) {
	dir := archive(t)
	sim := kubecostsim.New(kubecostsim.Config{Seed: 7, RetentionDays: 15, Now: func() time.Time { return now }})
	cur := billExport(t, sim)

	plain := makeReport(t, nil, "-dir", dir)
	if strings.Contains(plain, "Kubecost and the bill") || strings.Contains(plain, "bill-day") {
		t.Error("the report without -cur has the bill's section")
	}
	page := makeReport(t, nil, "-dir", dir, "-cur", cur)
	if a, b := reportCosts(t, plain), reportCosts(t, page); !maps.Equal(a, b) {
		t.Errorf("-cur changed the report's own numbers:\n%v\n%v", a, b)
	}
	rows := billRows(page)
	var kube, bill float64
	counts := map[string]int{}
	for k, v := range rows {
		f := strings.Split(v, "|")
		counts[strings.SplitN(k, "|", 2)[0]+" "+f[0]]++
		// Days the archive lacks (before Kubecost's retention, the hole,
		// pending days) are the bill's only, and left out of the ratio.
		if strings.HasPrefix(k, "111122223333/us-east-1/prod|") && f[0] != "bill_only" {
			kc, _ := strconv.ParseFloat(f[1], 64)
			b, _ := strconv.ParseFloat(f[2], 64)
			kube, bill = kube+kc, bill+b
		}
	}
	t.Logf("rows by cluster and presence: %v; prod: Kubecost %.2f, bill %.2f", counts, kube, bill)
	if counts["111122223333/us-east-1/prod both"] == 0 || counts["111122223333/us-east-1/prod-eu kubecost_only"] == 0 ||
		counts["111122223333/us-east-1/prod-eu both"] != 0 || counts["111122223333/us-east-1/prod-eu bill_only"] != 0 {
		t.Errorf("rows by cluster and presence: %v", counts)
	}
	// The bill prices each node at its purchase's rate of Kubecost's list
	// price (kubecostsim's CURMix: Savings Plan 0.72, Spot 0.30, on demand
	// 1), so the ratio is the mix's, up to Kubecost's daily adjustments
	// and hourly against daily idle.
	var list, paid float64
	for _, m := range sim.CURMix() {
		list, paid = list+m.HourlyOnDemand, paid+m.HourlyAmortized
	}
	if r, want := bill/kube, paid/list; math.Abs(r-want) > 0.03*want {
		t.Errorf("prod: bill / Kubecost = %.4f, want the simulator's mix %.4f within 3%%", r, want)
	}
}

// TestReportBillFromS3: the CUR export in a bucket (MinIO), named
// s3://bucket/prefix/ and opened through the destination code as the
// archive is, gives the same section as the same files in a directory.
func TestReportBillFromS3(t *testing.T) {
	h := newHarness(t)
	if code, logs := h.run(nil); code != cli.ExitOK {
		t.Fatalf("export to S3: exit %d\n%s", code, logs)
	}
	cur := billExport(t, h.sim.Sim)
	err := filepath.WalkDir(cur, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			rel, _ := filepath.Rel(cur, p)
			h.put("billing/"+filepath.ToSlash(rel), string(b))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	env := maps.Clone(h.env)
	env["AWS_REGION"] = "us-east-1"
	s3page := makeReport(t, env, "-bucket", bucket, "-bill", "s3://"+bucket+"/billing/")
	dirPage := makeReport(t, env, "-bucket", bucket, "-cur", cur)
	s3rows, dirRows := billRows(s3page), billRows(dirPage)
	if len(s3rows) == 0 || !maps.Equal(s3rows, dirRows) {
		t.Errorf("bill read from S3: %d rows, from a directory %d; they differ", len(s3rows), len(dirRows))
	}
}

// TestReportBillInBrowser opens the report with the bill's section in
// headless Chromium: the page raises no error and the section's table is
// drawn with a row per namespace.
func TestReportBillInBrowser(t *testing.T) {
	chromium := tooltest.Require(t, "chromium", "CHROMIUM_BIN")
	sim := kubecostsim.New(kubecostsim.Config{Seed: 7, RetentionDays: 15, Now: func() time.Time { return now }})
	page := makeReport(t, nil, "-dir", archive(t), "-cur", billExport(t, sim))
	probe := strings.Replace(page, "script-src 'none'", "script-src 'unsafe-inline'", 1)
	probe = strings.Replace(probe, "<head>", `<head>
<script>
window.__errors = [];
addEventListener('error', e => __errors.push('error: ' + e.message), true);
addEventListener('securitypolicyviolation', e => __errors.push('csp: ' + e.blockedURI));
addEventListener('load', () => {
  const rows = [...document.querySelectorAll('table.bill-namespaces tr[data-bill-namespace]')];
  const drawn = rows.filter(r => r.getBoundingClientRect().height > 0).length;
  const pre = document.createElement('pre');
  pre.id = 'kse-check';
  pre.textContent = 'rows=' + rows.length + ' drawn=' + drawn + ' errors=' + __errors.length + ' ' + __errors.join(';');
  document.body.appendChild(pre);
});
</script>`, 1)
	path := filepath.Join(t.TempDir(), "probe.html")
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
	m := regexp.MustCompile(`<pre id="kse-check">rows=(\d+) drawn=(\d+) errors=(\d+)([^<]*)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe wrote no result; chromium said:\n%s", stderr.String())
	}
	t.Logf("bill section in Chromium: %s", m[0])
	if string(m[1]) == "0" || string(m[1]) != string(m[2]) || string(m[3]) != "0" {
		t.Errorf("the section's namespace rows: %s of %s drawn, errors %s%s", m[2], m[1], m[3], m[4])
	}
}
