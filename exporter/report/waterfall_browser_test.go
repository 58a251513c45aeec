package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
)

// TestWaterfallInBrowser opens a page with the waterfall in headless
// Chromium (CHROMIUM_BIN, Debian's package from .ci/install-tools.sh): the
// page raises no error, every step's bar is drawn, and the drawn heights
// are in the ratio of the steps' amounts (the Kubecost bar 100 USD, the
// discounts bar 25 USD: a quarter of it). It saves a screenshot of the
// page as shipped, CSP and all, and logs its path.
func TestWaterfallInBrowser(t *testing.T) {
	chromium := tooltest.Require(t, "chromium", "CHROMIUM_BIN")
	day := time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)
	prod := ClusterRef{"111122223333", "us-east-1", "prod"}
	w := Waterfall{Kubecost: 100, Pricing: -2, Discounts: -25, Negotiated: -3, SplitBill: 70,
		IdleSpread: 5, SplitWeights: -1, SCAD: 74, ListPriced: 9, SCADOn: true}
	d := &Data{From: day, To: day, Generated: day, Currency: "USD", Clusters: []ClusterRef{prod},
		Bill: &Comparison{Source: "s3://billing/cur/", From: day, To: day, Waterfalls: []ClusterWaterfall{{Cluster: prod, Total: w,
			Namespaces: []NamespaceWaterfall{{"payments", w}}}}}}
	var page strings.Builder
	if err := Render(&page, d); err != nil {
		t.Fatal(err)
	}
	probe := strings.Replace(page.String(), "script-src 'none'", "script-src 'unsafe-inline'", 1)
	probe = strings.Replace(probe, "<head>", `<head>
<script>
window.__errors = [];
addEventListener('error', e => __errors.push('error: ' + e.message), true);
addEventListener('securitypolicyviolation', e => __errors.push('csp: ' + e.blockedURI));
addEventListener('load', () => {
  const bars = [...document.querySelectorAll('svg[data-chart="waterfall-prod"] rect.step')];
  const pre = document.createElement('pre');
  pre.id = 'kse-check';
  pre.textContent = bars.map(b => b.dataset.step + '=' + b.getBoundingClientRect().height.toFixed(3)).join(' ') + ' errors=' + __errors.length + ' ' + __errors.join(';');
  document.body.appendChild(pre);
});
</script>`, 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "probe.html")
	if err := os.WriteFile(path, []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--hide-scrollbars", "--window-size=1100,1400"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, append(args, "--virtual-time-budget=5000", "--dump-dom", "file://"+path)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`<pre id="kse-check">([^<]*) errors=(\d+)([^<]*)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe wrote no result; chromium said:\n%s", stderr.String())
	}
	t.Logf("waterfall in Chromium: %s", m[0])
	if string(m[2]) != "0" {
		t.Errorf("the page raised errors: %s", m[3])
	}
	heights := map[string]float64{}
	for _, f := range strings.Fields(string(m[1])) {
		k, v, _ := strings.Cut(f, "=")
		heights[k], _ = strconv.ParseFloat(v, 64)
	}
	if len(heights) != 8 {
		t.Fatalf("%d bars drawn, want 8: %s", len(heights), m[1])
	}
	if k, dsc := heights["kubecost"], heights["discounts"]; k < 50 || dsc/k < 0.24 || dsc/k > 0.26 {
		t.Errorf("drawn heights: Kubecost %v px, discounts %v px; want a quarter", k, dsc)
	}
	if s, k := heights["scad"], heights["kubecost"]; s/k < 0.73 || s/k > 0.75 {
		t.Errorf("drawn heights: SCAD %v px against Kubecost %v px; want 0.74", s, k)
	}

	shipped := filepath.Join(dir, "report.html")
	if err := os.WriteFile(shipped, []byte(page.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "waterfall.png")
	cmd = exec.CommandContext(ctx, chromium, append(args, "--screenshot="+shot, "file://"+shipped)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	if keep := os.Getenv("KSE_SCREENSHOT_DIR"); keep != "" {
		b, _ := os.ReadFile(shot)
		_ = os.WriteFile(filepath.Join(keep, "waterfall.png"), b, 0o644)
	}
	t.Logf("screenshot: %s", shot)
}
