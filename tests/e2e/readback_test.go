package e2e_test

import (
	"encoding/pem"
	"fmt"
	"maps"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
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

// The report opens the archive the way run does (destination.Open), so
// the environment that ran an export reads it back. Each test here runs
// `run`, then `report` with the very same variables, and checks that the
// report counted every file the run wrote: plain variables, an
// object-store file with its prefix and static keys, a custom endpoint
// behind a private CA, and (TestChainedRun) a parent role.

// reportFiles runs `report` with env and returns how many day files it
// read.
func reportFiles(t *testing.T, env map[string]string) int {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.html")
	code, stdout, stderr := runMain(env, "report", "-o", out, "-today", now.Format(time.RFC3339))
	if code != cli.ExitOK {
		t.Fatalf("report with the run's environment: exit %d\n%s%s", code, stdout, stderr)
	}
	m := regexp.MustCompile(`report: (\d+) files`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("report output: %s", stdout)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// runThenReport exports with env and reports with the same env; the
// report must count every object under prefix.
func runThenReport(t *testing.T, h *harness, env map[string]string, prefix string) {
	t.Helper()
	code, logs := runEnv(env, h.now)
	if code != cli.ExitOK {
		t.Fatalf("run: exit %d\n%s", code, logs)
	}
	written := len(h.under(prefix))
	if written == 0 {
		t.Fatalf("run wrote nothing under %q:\n%s", prefix, logs)
	}
	if got := reportFiles(t, env); got != written {
		t.Errorf("report read %d files, run wrote %d under %q", got, written, prefix)
	}
}

// TestReportReadsRunVariables: the plain variables (bucket, custom
// endpoint, keys from the environment).
func TestReportReadsRunVariables(t *testing.T) {
	h := newHarness(t)
	env := maps.Clone(h.env)
	env["BACKFILL_PERIOD_DAYS"] = "7"
	runThenReport(t, h, env, "account_id=")
}

// objectStoreEnv is h's environment with the destination in an
// object-store file alone: no S3 variable, no AWS key in the
// environment.
func objectStoreEnv(t *testing.T, h *harness, config string) map[string]string {
	t.Helper()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"} {
		t.Setenv(k, "")
	}
	env := maps.Clone(h.env)
	for _, k := range []string{"S3_BUCKET_NAME", "AWS_ENDPOINT_URL_S3", "AWS_REGION"} {
		delete(env, k)
	}
	file := filepath.Join(t.TempDir(), "object-store.yaml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env["OBJECT_STORE_CONFIG_FILE"] = file
	env["BACKFILL_PERIOD_DAYS"] = "7"
	return env
}

// TestReportReadsObjectStoreFile: bucket, prefix, endpoint, region and
// static keys from Kubecost's object-store.yaml alone. The report finds
// the files under the file's prefix; before, it asked for -bucket.
func TestReportReadsObjectStoreFile(t *testing.T) {
	h := newHarness(t)
	env := objectStoreEnv(t, h, fmt.Sprintf(`type: S3
prefix: team-a/costs
config:
  bucket: %s
  endpoint: %s
  region: us-east-1
  insecure: true
  access_key: %s
  secret_key: %s
`, bucket, strings.TrimPrefix(h.minio.Endpoint, "http://"), h.minio.AccessKey, h.minio.SecretKey))
	runThenReport(t, h, env, "team-a/costs/account_id=")
}

// TestReportReadsPrivateCAEndpoint: an S3-compatible endpoint over TLS
// with a certificate of a private CA, trusted through the file's
// tls_config.ca_file. Without the file's TLS settings, which the report
// did not read, the handshake fails.
func TestReportReadsPrivateCAEndpoint(t *testing.T) {
	h := newHarness(t)
	target, err := url.Parse(h.minio.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	// httptest's certificate is signed by a CA of its own, valid for
	// 127.0.0.1; the proxy keeps the Host the request was signed for.
	tlsFront := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(tlsFront.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsFront.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	env := objectStoreEnv(t, h, fmt.Sprintf(`type: S3
config:
  bucket: %s
  endpoint: %s
  region: us-east-1
  access_key: %s
  secret_key: %s
  http_config:
    tls_config:
      ca_file: %s
`, bucket, strings.TrimPrefix(tlsFront.URL, "https://"), h.minio.AccessKey, h.minio.SecretKey, ca))
	runThenReport(t, h, env, "account_id=")

	// The same file without the CA: both commands refuse the endpoint.
	noCA := objectStoreEnv(t, h, fmt.Sprintf("type: S3\nconfig:\n  bucket: %s\n  endpoint: %s\n  region: us-east-1\n  access_key: %s\n  secret_key: %s\n",
		bucket, strings.TrimPrefix(tlsFront.URL, "https://"), h.minio.AccessKey, h.minio.SecretKey))
	code, stdout, stderr := runMain(noCA, "report", "-o", filepath.Join(t.TempDir(), "r.html"))
	if code != cli.ExitRuntime || !strings.Contains(stdout+stderr, "certificate") {
		t.Errorf("report without the CA: exit %d, want 1 naming the certificate\n%s%s", code, stdout, stderr)
	}
}

// TestReportAsksKubecostWhichDaysItHolds: on a Kubecost that keeps 91
// days (3.x's default), a day 16-91 days old that the archive lacks is
// "missing", as the run sees it (its backlog takes it), not "no Kubecost
// data" as a 15-day retention would call it; a day older than the server
// holds is "no Kubecost data". -kubecost-retention-days still decides
// when it is given.
func TestReportAsksKubecostWhichDaysItHolds(t *testing.T) {
	clock := func() time.Time { return now }
	sim := newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 91, Now: clock})
	env := map[string]string{"OUTPUT_DIR": t.TempDir(), "CLUSTER_ID": clusterARN, "KUBECOST_API_ENDPOINT": sim.URL,
		"BACKFILL_PERIOD_DAYS": "15", "LOG_FORMAT": "json"}
	if code, logs := runEnv(env, clock); code != cli.ExitOK {
		t.Fatalf("run: exit %d\n%s", code, logs)
	}
	counts := func(extra ...string) map[string]int {
		out := filepath.Join(t.TempDir(), "report.html")
		args := append([]string{"report", "-o", out, "-today", now.Format(time.RFC3339), "-from", now.AddDate(0, 0, -120).Format(time.DateOnly), "-to", now.Format(time.DateOnly)}, extra...)
		if code, stdout, stderr := runMain(env, args...); code != cli.ExitOK {
			t.Fatalf("report %v: exit %d\n%s%s", extra, code, stdout, stderr)
		}
		page, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for state, re := range map[string]string{
			"stored": `stored \((\d+)\)`, "missing": `missing, a day Kubecost still holds[^(]*\((\d+)\)`,
			"none": `no Kubecost data, a day[^(]*\((\d+)\)`, "pending": `pending, not settled yet \((\d+)\)`,
		} {
			m := regexp.MustCompile(re).FindSubmatch(page)
			if m == nil {
				t.Fatalf("the page has no %s count", state)
			}
			got[state], _ = strconv.Atoi(string(m[1]))
		}
		return got
	}
	asked := counts()
	t.Logf("asked Kubecost: %v", asked)
	// 121 days from -from to today; the window's 13 settled days are
	// stored; the server holds 91.
	if total := asked["stored"] + asked["missing"] + asked["none"] + asked["pending"]; total != 121 {
		t.Errorf("%d days classified, want 121: %v", total, asked)
	}
	if asked["stored"] < 10 || asked["missing"] < 70 || asked["none"] < 25 {
		t.Errorf("asked Kubecost: %v; want about 13 stored, 76 missing (16-91 days old), 30 with no Kubecost data", asked)
	}
	given := counts("-kubecost-retention-days", "15")
	if given["missing"] > 2 || given["none"] < 95 {
		t.Errorf("-kubecost-retention-days 15: %v; want the days older than 15 as no Kubecost data", given)
	}
}

// TestReportAsksKubecostWithoutOpeningRunsArchive: asking Kubecost with
// the run's settings does not open the run's destination a second time.
// A report of another directory (-dir) with the run's environment must
// not create the run's OUTPUT_DIR, which opening it for writing would.
func TestReportAsksKubecostWithoutOpeningRunsArchive(t *testing.T) {
	clock := func() time.Time { return now }
	sim := newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 91, Now: clock})
	archiveDir, runDir := t.TempDir(), filepath.Join(t.TempDir(), "not-created")
	env := map[string]string{"OUTPUT_DIR": archiveDir, "CLUSTER_ID": clusterARN, "KUBECOST_API_ENDPOINT": sim.URL,
		"BACKFILL_PERIOD_DAYS": "5", "LOG_FORMAT": "json"}
	if code, logs := runEnv(env, clock); code != cli.ExitOK {
		t.Fatalf("run: exit %d\n%s", code, logs)
	}
	env["OUTPUT_DIR"] = runDir
	out := filepath.Join(t.TempDir(), "report.html")
	code, stdout, stderr := runMain(env, "report", "-dir", archiveDir, "-o", out, "-today", now.Format(time.RFC3339))
	if code != cli.ExitOK || strings.Contains(stderr, "could not be asked") {
		t.Fatalf("report: exit %d, or Kubecost not asked\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(runDir); err == nil {
		t.Errorf("the report created the run's OUTPUT_DIR %s", runDir)
	}
}
