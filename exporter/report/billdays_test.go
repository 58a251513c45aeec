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

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

var (
	outsideRE = regexp.MustCompile(`<li class="bill-outside" data-account="([0-9]+)" data-region="([a-z0-9-]+)" data-cluster="([^"]+)" data-days="([0-9]+)" data-bill="([^"]+)"`)
	dayRowRE  = regexp.MustCompile(`<tr class="bill-day" [^>]*data-day="([0-9-]+)" [^>]*data-bill="([^"]+)"[^>]* data-present="([a-z_]+)"`)
)

func reportWithBill(t *testing.T, archive, billed string, extra ...string) (page, text string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr bytes.Buffer
	args := append([]string{"report", "-dir", archive, "-cur", billed, "-today", "2026-11-21", "-o", out}, extra...)
	if code := cli.Main(context.Background(), args, func(string) (string, bool) { return "", false }, &stdout, &stderr); code != cli.ExitOK {
		t.Fatalf("report: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), stdout.String()
}

// TestBillOnlyDaysNamed: by default the section compares the archive's
// days, but the bill holds the rest of its month. The page and the text
// name what the bill costs on the other days of its billing periods (so
// that compared + not compared is the bill's total, as an independent
// read of the export gives it) and how to include them; with -from and
// -to over the month they are rows, "bill only", and nothing is left out.
func TestBillOnlyDaysNamed(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	const arn = "arn:aws:eks:us-east-1:111122223333:cluster/prod"
	sim := kubecostsim.NewServer(kubecostsim.Config{Seed: 3, RetentionDays: 3, Now: func() time.Time { return now }})
	t.Cleanup(sim.Close)
	archive := t.TempDir()
	env := map[string]string{"OUTPUT_DIR": archive, "CLUSTER_ID": arn, "KUBECOST_API_ENDPOINT": sim.URL, "LOG_FORMAT": "json"}
	var logs bytes.Buffer
	if code := cli.RunWith(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		&logs, cli.Hooks{Now: func() time.Time { return now }}); code != cli.ExitOK {
		t.Fatalf("export: exit %d\n%s", code, logs.String())
	}
	billed := t.TempDir()
	first, last := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	billSim := kubecostsim.New(kubecostsim.Config{Seed: 3, RetentionDays: 30, Now: func() time.Time { return now }})
	if _, err := billSim.WriteCURExport(context.Background(), billed, kubecostsim.CUROptions{ClusterARN: arn, From: first, To: last}); err != nil {
		t.Fatal(err)
	}
	store, err := dirstore.New(billed, dirstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := bill.Read(context.Background(), bill.Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	var billTotal float64
	billDays := map[time.Time]bool{}
	for k, c := range whole.Rows {
		billTotal += c.Total(bill.MSplit) + c.Total(bill.MUnused)
		billDays[k.Day] = true
	}

	page, text := reportWithBill(t, archive, billed)
	var compared float64
	comparedDays := map[string]bool{}
	for _, m := range dayRowRE.FindAllStringSubmatch(page, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		compared += v
		comparedDays[m[1]] = true
	}
	out := outsideRE.FindAllStringSubmatch(page, -1)
	if len(out) != 1 || out[0][3] != "prod" || out[0][1] != "111122223333" {
		t.Fatalf("the page names the days left out as %v, want one line for prod; compared days %v", out, comparedDays)
	}
	left, _ := strconv.ParseFloat(out[0][5], 64)
	days, _ := strconv.Atoi(out[0][4])
	t.Logf("compared %d days, %.2f; left out %d days, %.2f; the export: %d days, %.2f", len(comparedDays), compared, days, left, len(billDays), billTotal)
	if days+len(comparedDays) != len(billDays) || days == 0 {
		t.Errorf("%d days left out and %d compared; the bill has %d", days, len(comparedDays), len(billDays))
	}
	if math.Abs(compared+left-billTotal) > 1e-9*billTotal {
		t.Errorf("compared %v + left out %v = %v, the bill's total is %v", compared, left, compared+left, billTotal)
	}
	if !strings.Contains(text, "Not compared") || !strings.Contains(text, "-from and -to") || !strings.Contains(text, strconv.Itoa(days)+" days") {
		t.Errorf("the text output does not name the days left out:\n%s", text)
	}

	page, _ = reportWithBill(t, archive, billed, "-from", "2026-11-01", "-to", "2026-11-30")
	if strings.Contains(page, `id="bill-outside"`) {
		t.Error("with -from and -to over the month, days are still left out")
	}
	billOnly := map[string]bool{}
	compared = 0
	for _, m := range dayRowRE.FindAllStringSubmatch(page, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		compared += v
		if m[3] == "bill_only" {
			billOnly[m[1]] = true
		}
	}
	if len(billOnly) != days || math.Abs(compared-billTotal) > 1e-9*billTotal {
		t.Errorf("over the month: %d bill-only days (want %d), bill %v (want %v)", len(billOnly), days, compared, billTotal)
	}
}
