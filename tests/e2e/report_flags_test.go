package e2e_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// The report's flags win over the variables, in a run's environment too,
// and the run's S3_REQUEST_TIMEOUT and AWS_MAX_ATTEMPTS bound its calls:
// the destination (destination.Settings) is one description, read the
// same way by both commands.

// s3Call is one request an S3 endpoint received.
type s3Call struct {
	Host, Path, Prefix, Region string
}

// recorder is an S3 endpoint on 127.0.0.1 that records every request
// (host, path, list prefix and the region of its SigV4 signature) and
// answers with status (an empty listing for 200).
type recorder struct {
	URL   string
	mu    sync.Mutex
	calls []s3Call
}

var credScopeRE = regexp.MustCompile(`Credential=[^/]+/\d{8}/([^/]+)/s3/aws4_request`)

func newRecorder(t *testing.T, status int) *recorder {
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := s3Call{Host: r.Host, Path: r.URL.Path, Prefix: r.URL.Query().Get("prefix")}
		if m := credScopeRE.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
			c.Region = m[1]
		}
		rec.mu.Lock()
		rec.calls = append(rec.calls, c)
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		if status == http.StatusOK {
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>`)
		}
	}))
	t.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

func (r *recorder) taken() []s3Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// reportEnv is a run's environment in a pod: IRSA's AWS_REGION, the
// run's bucket and prefix, the S3 endpoint at s3URL. Static keys come
// from the process, as the SDK reads them.
func reportEnv(t *testing.T, s3URL string) map[string]string {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_MAX_ATTEMPTS",
		"AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE", "AWS_SESSION_TOKEN"} {
		t.Setenv(k, "")
	}
	return map[string]string{
		"S3_BUCKET_NAME": "team-a-bucket", "S3_PREFIX": "team-a/", "CLUSTER_ID": clusterARN,
		"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-2",
		"AWS_ENDPOINT_URL_S3": s3URL, "AWS_ENDPOINT_URL_STS": "http://" + closedAddr(t),
		"KUBECOST_API_ENDPOINT": "http://" + closedAddr(t), "LOG_FORMAT": "json",
	}
}

// reportCalls runs report with env and args and returns what the
// endpoint received; the listing is empty, so the report exits 1 having
// listed.
func reportCalls(t *testing.T, rec *recorder, env map[string]string, args ...string) []s3Call {
	t.Helper()
	args = append([]string{"report", "-o", filepath.Join(t.TempDir(), "r.html"), "-kubecost-retention-days", "15"}, args...)
	code, stdout, stderr := runMain(env, args...)
	calls := rec.taken()
	if code == cli.ExitConfig || len(calls) == 0 {
		t.Fatalf("report %q: exit %d, %d S3 calls\n%s%s", args, code, len(calls), stdout, stderr)
	}
	return calls
}

// TestReportFlagsWinInRunEnvironment: -region over AWS_REGION and
// AWS_DEFAULT_REGION (the signature's region), -prefix over S3_PREFIX
// (every listed prefix), -bucket over S3_BUCKET_NAME (the path), checked
// against the calls without flags, which follow the variables.
func TestReportFlagsWinInRunEnvironment(t *testing.T) {
	rec := newRecorder(t, http.StatusOK)
	env := reportEnv(t, rec.URL)
	check := func(name string, calls []s3Call, bucket, prefix, region string) {
		t.Helper()
		for _, c := range calls {
			if !strings.HasPrefix(c.Path, "/"+bucket) || !strings.HasPrefix(c.Prefix, prefix) || c.Region != region {
				t.Errorf("%s: call %+v, want bucket %s, prefix %s, signed for %s", name, c, bucket, prefix, region)
			}
		}
	}
	check("variables", reportCalls(t, rec, env), "team-a-bucket", "team-a/", "us-east-1")
	check("flags", reportCalls(t, rec, env, "-region", "eu-west-1", "-prefix", "team-b/", "-bucket", "team-b-bucket"),
		"team-b-bucket", "team-b/", "eu-west-1")

	delete(env, "AWS_REGION")
	check("AWS_DEFAULT_REGION", reportCalls(t, rec, env), "team-a-bucket", "team-a/", "us-east-2")
	check("-region over AWS_DEFAULT_REGION", reportCalls(t, rec, env, "-region", "ap-southeast-2"), "team-a-bucket", "team-a/", "ap-southeast-2")
	delete(env, "AWS_DEFAULT_REGION")
	check("CLUSTER_ID's region", reportCalls(t, rec, env), "team-a-bucket", "team-a/", "us-east-1")
}

// TestReportObjectStoreFlagWins: -object-store-config-file over
// OBJECT_STORE_CONFIG_FILE: the flag's file names the bucket, prefix
// and region the calls go to.
func TestReportObjectStoreFlagWins(t *testing.T) {
	rec := newRecorder(t, http.StatusOK)
	env := reportEnv(t, rec.URL)
	for _, k := range []string{"S3_BUCKET_NAME", "S3_PREFIX", "AWS_ENDPOINT_URL_S3"} {
		delete(env, k)
	}
	file := func(bucket, prefix, region string) string {
		p := filepath.Join(t.TempDir(), "object-store.yaml")
		body := fmt.Sprintf("type: S3\nprefix: %s\nconfig:\n  bucket: %s\n  endpoint: %s\n  region: %s\n  insecure: true\n",
			prefix, bucket, strings.TrimPrefix(rec.URL, "http://"), region)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env["OBJECT_STORE_CONFIG_FILE"] = file("env-bucket", "env-prefix", "eu-central-1")
	flag := file("flag-bucket", "flag-prefix", "eu-north-1")
	for name, tc := range map[string]struct {
		args                   []string
		bucket, prefix, region string
	}{
		"variable": {nil, "env-bucket", "env-prefix/", "eu-central-1"},
		"flag":     {[]string{"-object-store-config-file", flag}, "flag-bucket", "flag-prefix/", "eu-north-1"},
	} {
		for _, c := range reportCalls(t, rec, env, tc.args...) {
			if !strings.HasPrefix(c.Path, "/"+tc.bucket) || !strings.HasPrefix(c.Prefix, tc.prefix) || c.Region != tc.region {
				t.Errorf("%s: call %+v, want bucket %s, prefix %s, signed for %s", name, c, tc.bucket, tc.prefix, tc.region)
			}
		}
	}
}

// TestReportAttemptsBoundByRunVariables: AWS_MAX_ATTEMPTS, given in the
// run's environment only (not the process's), is how many times the
// report asks an endpoint that answers 503.
func TestReportAttemptsBoundByRunVariables(t *testing.T) {
	rec := newRecorder(t, http.StatusServiceUnavailable)
	env := reportEnv(t, rec.URL)
	for _, attempts := range []int{1, 2, 4} {
		env["AWS_MAX_ATTEMPTS"] = fmt.Sprint(attempts)
		if calls := reportCalls(t, rec, env); len(calls) != attempts {
			t.Errorf("AWS_MAX_ATTEMPTS=%d: %d calls: %+v", attempts, len(calls), calls)
		}
	}
}

// TestStalledEndpointBoundsRunAndReport: against an S3 endpoint that
// accepts and never answers, S3_REQUEST_TIMEOUT=1 and AWS_MAX_ATTEMPTS=2
// from the run's environment end the report, as they end the run, within
// a few seconds (two attempts of one second and the SDK's backoff), with
// the error naming the setting. Before, the report waited on.
func TestStalledEndpointBoundsRunAndReport(t *testing.T) {
	env := reportEnv(t, stalledServer(t))
	env["KUBECOST_API_ENDPOINT"] = newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 15}).URL
	env["S3_REQUEST_TIMEOUT"], env["AWS_MAX_ATTEMPTS"] = "1", "2"
	const bound = 20 * time.Second
	start := time.Now()
	code, logs := runEnv(env, nil)
	if took := time.Since(start); code != cli.ExitRuntime || took > bound || !strings.Contains(logs, "no progress for 1s (S3_REQUEST_TIMEOUT)") {
		t.Errorf("run: exit %d after %s (bound %s)\n%s", code, took, bound, logs)
	}
	start = time.Now()
	code, stdout, stderr := runMain(env, "report", "-o", filepath.Join(t.TempDir(), "r.html"), "-kubecost-retention-days", "15")
	if took := time.Since(start); code != cli.ExitRuntime || took > bound || !strings.Contains(stderr, "no progress for 1s (S3_REQUEST_TIMEOUT)") {
		t.Errorf("report: exit %d after %s (bound %s)\n%s%s", code, took, bound, stdout, stderr)
	}
}
