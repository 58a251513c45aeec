package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/faultproxy"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pushgw"
)

// matrix is the S3 fault matrix: MinIO behind a fault-injecting proxy, a
// small simulated cluster for single-part days, and a large one whose day
// file (about 6 MiB) goes multipart with 5 MiB parts. Each case runs the
// exporter once with the fault, checks the exit status, the last line and
// what is stored, then runs it again healthy and checks that this run
// heals exactly what is missing and leaves no unfinished upload.
//
// The large cluster's simulator and the exporter runs on it are child
// processes built without the race detector: under -race, generating and
// encoding a 40k-row day in the test process would dominate the matrix.
type matrix struct {
	*harness
	proxy  *faultproxy.Proxy
	bigURL string
	proj   *schema.Projection
}

// bigNow is the big simulator's clock: the real one, because the cases
// that signal a real child process cannot inject a clock into it.
var bigNow = time.Now

func newMatrix(t *testing.T) *matrix {
	h := newHarness(t)
	p, err := faultproxy.New(h.env["AWS_ENDPOINT_URL_S3"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	h.env["AWS_ENDPOINT_URL_S3"] = p.URL
	t.Setenv("AWS_ENDPOINT_URL_S3", p.URL)
	// Two attempts per call keep the persistent faults short.
	t.Setenv("AWS_MAX_ATTEMPTS", "2")
	// Generous for the fault cases, so a loaded machine (the race detector,
	// other jobs) never turns an injected 503 into a timeout; the stall
	// cases set 1 s themselves.
	h.env["S3_REQUEST_TIMEOUT"] = "10"
	h.env["BACKFILL_PERIOD_DAYS"] = "4" // one settled day
	// Every case runs with credentials in the Kubecost and Pushgateway
	// URLs, and checks that no line shows them.
	gw := pushgw.Start(t)
	h.env["KUBECOST_API_ENDPOINT"] = withMatrixCreds(h.sim.URL)
	h.env["PUSHGATEWAY_URL"] = withMatrixCreds(gw.URL)
	return &matrix{harness: h, proxy: p, bigURL: withMatrixCreds(startSim(t, "-seed", "11", "-containers-per-hour", "22000", "-retention-days", "5")),
		proj: schema.NewProjection(clusterARN, "prod", []string{labelKey}, nil)}
}

// The credentials every case carries in its URLs.
const matrixUser, matrixSecret = "matrixuser", "m4trixS3cret"

func withMatrixCreds(u string) string {
	return strings.Replace(u, "://", "://"+matrixUser+":"+matrixSecret+"@", 1)
}

// checkOutput holds every case to the rules of the matrix: the last line
// is the run's summary (or, for a configuration error, its one line) and
// at most 300 characters, and no line shows a secret.
func checkOutput(t *testing.T, logs string, configError bool, secrets ...string) string {
	t.Helper()
	last := lastLine(logs)
	want := "run summary"
	if configError {
		want = "configuration error"
	}
	if len(last) > 300 || !strings.Contains(last, want) {
		t.Errorf("last line (%d chars) is not a short %q line: %s", len(last), want, last)
	}
	for _, line := range strings.Split(logs, "\n") {
		for _, s := range append(secrets, matrixUser, matrixSecret) {
			if strings.Contains(line, s) {
				t.Errorf("a line shows the secret %q: %s", s, line)
			}
		}
	}
	return last
}

// startSim runs the simulator command as a child process and returns its URL.
func startSim(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := buildBin("kubecost-sim")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("simulator did not say where it listens: %q %v", line, err)
	}
	go io.Copy(io.Discard, out)
	return u
}

// mcase is one row of the matrix.
type mcase struct {
	name      string
	env       map[string]string // on top of the matrix's
	multipart bool              // the big cluster, one ~6 MiB day in 5 MiB parts
	rules     []faultproxy.Rule
	wantCode  int
	wantLast  []string // in the last line
	// bounded: the faulty run must end within this (a hang never would).
	// Generous: two days × two attempts × about 2 s of S3_REQUEST_TIMEOUT
	// and backoff take under 15 s; 90 s only separates "bounded" from
	// "hangs", it measures nothing.
	bounded time.Duration
	// exec runs the faulty run; nil runs it in-process.
	exec func(t *testing.T, m *matrix, env map[string]string) (int, string)
	// faultEnv is added to the faulty run's environment only.
	faultEnv map[string]string
	// secrets must appear in no line, beside the matrix's own.
	secrets []string
	// configError: the faulty run is refused before it starts (exit 2);
	// there is nothing to heal.
	configError bool
}

func (m *matrix) caseEnv(c mcase) map[string]string {
	env := maps.Clone(m.env)
	maps.Copy(env, c.env)
	env["S3_PREFIX"] = strings.NewReplacer(" ", "-", "/", "-").Replace(c.name) + "/"
	if c.multipart {
		env["KUBECOST_API_ENDPOINT"] = m.bigURL
		env["S3_PART_SIZE_MIB"] = "5"
	}
	return env
}

func (m *matrix) runIn(env map[string]string, h cli.Hooks) (int, string) {
	var buf bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code := cli.RunWith(context.Background(), lookup, &buf, h)
	logsMu.Lock() // TestConcurrentRuns runs two at once
	m.logs.Write(buf.Bytes())
	logsMu.Unlock()
	return code, buf.String()
}

// logsMu guards the harness's log buffer across concurrent runs.
var logsMu sync.Mutex

// nowFor is the plan clock of a case's runs.
func nowFor(c mcase) func() time.Time {
	if c.multipart {
		return bigNow
	}
	return func() time.Time { return now }
}

func (m *matrix) check(t *testing.T, c mcase) {
	env := m.caseEnv(c)
	prefix := env["S3_PREFIX"]
	m.proxy.SetRules(c.rules...)
	m.proxy.ResetLog()
	start := time.Now()
	var code int
	var logs string
	faulty := maps.Clone(env)
	maps.Copy(faulty, c.faultEnv)
	switch {
	case c.exec != nil:
		code, logs = c.exec(t, m, faulty)
	case c.multipart:
		code, logs = execWith(t, nil)(t, m, faulty)
	default:
		code, logs = m.runIn(faulty, cli.Hooks{Now: nowFor(c)})
	}
	took := time.Since(start)
	m.proxy.SetRules()
	if c.bounded > 0 && took > c.bounded {
		t.Errorf("the stalled run took %s, more than the bound plus retries allow (%s)", took, c.bounded)
	}
	if code != c.wantCode {
		t.Fatalf("exit %d, want %d\n%s", code, c.wantCode, logs)
	}
	last := checkOutput(t, logs, c.configError, c.secrets...)
	for _, w := range c.wantLast {
		if !strings.Contains(last, w) {
			t.Errorf("last line lacks %q: %s", w, last)
		}
	}
	t.Logf("faulty run: exit %d in %s; last line: %s", code, took.Round(time.Millisecond), last)
	if c.configError {
		return
	}

	// Everything stored reads back whole with the independent reader.
	before := map[string]string{}
	for k, o := range m.objects() {
		if strings.HasPrefix(k, prefix) {
			checkKey(t, m.harness, m.proj, k)
			before[k] = o.etag
		}
	}

	// The next healthy run, an hour and more later, heals exactly the rest.
	m.proxy.ResetLog()
	if c.multipart {
		// Nothing of ours may be left to clean up: the failed run aborted it.
		code, logs = execWith(t, nil)(t, m, env)
	} else {
		code, logs = m.runIn(env, cli.Hooks{Now: nowFor(c), WallClock: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	}
	if code != cli.ExitOK {
		t.Fatalf("healing run: exit %d\n%s", code, logs)
	}
	checkOutput(t, logs, false, c.secrets...)
	want := m.wantKeys(c, prefix)
	after := map[string]string{}
	for k, o := range m.objects() {
		if strings.HasPrefix(k, prefix) {
			after[k] = o.etag
		}
	}
	if len(after) != len(want) {
		t.Fatalf("after healing %d objects under %s, want %d: %v", len(after), prefix, len(want), after)
	}
	for _, k := range want {
		if _, ok := after[k]; !ok {
			t.Errorf("healing run did not write %s", k)
		}
		if e, ok := before[k]; ok && after[k] != e {
			t.Errorf("healing run rewrote %s, which the faulty run had written", k)
		}
		checkKey(t, m.harness, m.proj, k)
	}
	writes := 0
	for _, k := range want {
		writes += m.proxy.Count(faultproxy.PutObject, k, http.StatusOK) + m.proxy.Count(faultproxy.CompleteMultipartUpload, k, http.StatusOK)
	}
	if writes != len(want)-len(before) {
		t.Errorf("healing run wrote %d objects, want exactly the %d missing ones", writes, len(want)-len(before))
	}
	if left := m.uploads(t, prefix); len(left) > 0 {
		t.Errorf("unfinished uploads after the healing run: %v", left)
	}
}

// wantKeys are the keys of the days the simulator has in the window.
func (m *matrix) wantKeys(c mcase, prefix string) []string {
	l := prod
	l.Prefix = prefix
	var out []string
	if c.multipart {
		// One day, which the large simulator (5 days of retention) has.
		first, last := exporter.Window(bigNow(), 4, exporter.DefaultSettle)
		for d := first; !d.After(last); d = d.Add(24 * time.Hour) {
			out = append(out, l.Key(d, exporter.Snappy))
		}
		return out
	}
	first, last := exporter.Window(nowFor(c)(), 4, exporter.DefaultSettle)
	for _, d := range m.sim.Sim.AvailableDays() {
		if !d.Before(first) && !d.After(last) {
			out = append(out, l.Key(d, exporter.Snappy))
		}
	}
	return out
}

// uploads lists the unfinished multipart uploads under prefix. It lists
// the whole bucket: MinIO answers a prefix only with the uploads of that
// exact key.
func (m *matrix) uploads(t *testing.T, prefix string) []string {
	t.Helper()
	out, err := m.s3.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, u := range out.Uploads {
		if k := aws.ToString(u.Key); strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	return keys
}

func TestS3FaultMatrix(t *testing.T) {
	m := newMatrix(t)
	stall := []string{"no progress for 1s", "S3_REQUEST_TIMEOUT"}
	fast := map[string]string{"S3_REQUEST_TIMEOUT": "1"}
	for _, c := range []mcase{
		{name: "503 once on PutObject", rules: []faultproxy.Rule{{Op: faultproxy.PutObject, Action: faultproxy.Status, Status: 503, Code: "SlowDown", Times: 1}}},
		{name: "503 always on PutObject", rules: []faultproxy.Rule{{Op: faultproxy.PutObject, Action: faultproxy.Status, Status: 503, Code: "SlowDown"}},
			wantCode: 1, wantLast: []string{"HTTP 503 SlowDown", "after 2 attempts"}},
		{name: "500 always on ListObjectsV2", rules: []faultproxy.Rule{{Op: faultproxy.ListObjectsV2, Action: faultproxy.Status, Status: 500, Code: "InternalError"}},
			wantCode: 1, wantLast: []string{"HTTP 500 InternalError"}},
		{name: "500 once on UploadPart", multipart: true, rules: []faultproxy.Rule{{Op: faultproxy.UploadPart, Action: faultproxy.Status, Status: 500, Code: "InternalError", Times: 1}}},
		{name: "connection cut mid-PutObject once", rules: []faultproxy.Rule{{Op: faultproxy.PutObject, Action: faultproxy.Cut, After: 2000, Times: 1}}},
		{name: "connection cut mid-UploadPart once", multipart: true, rules: []faultproxy.Rule{{Op: faultproxy.UploadPart, Action: faultproxy.Cut, After: 1 << 20, Times: 1}}},
		{name: "connection cut mid-UploadPart always", multipart: true, rules: []faultproxy.Rule{{Op: faultproxy.UploadPart, Action: faultproxy.Cut, After: 1 << 20}},
			wantCode: 1, wantLast: []string{"UploadPart"}},
		{name: "403 on PutObject", rules: []faultproxy.Rule{{Op: faultproxy.PutObject, Action: faultproxy.Status, Status: 403, Code: "AccessDenied"}},
			wantCode: 1, wantLast: []string{"HTTP 403 AccessDenied"}},
		{name: "stall on PutObject", rules: []faultproxy.Rule{{Op: faultproxy.PutObject, Action: faultproxy.Stall}}, wantCode: 1, wantLast: stall, bounded: 90 * time.Second, env: fast},
		{name: "stall on ListObjectsV2", rules: []faultproxy.Rule{{Op: faultproxy.ListObjectsV2, Action: faultproxy.Stall}}, wantCode: 1, wantLast: stall, bounded: 90 * time.Second, env: fast},
		{name: "stall on UploadPart", multipart: true, rules: []faultproxy.Rule{{Op: faultproxy.UploadPart, Action: faultproxy.StallBeforeBody}}, wantCode: 1, wantLast: stall, bounded: 90 * time.Second, env: fast},
		// A child process plans with the real clock, so it needs the
		// simulator that serves days around the real date (the big one).
		{name: "tiny TMPDIR", multipart: true, exec: execWith(t, nil, "--fsize=4096"), wantCode: 1, wantLast: []string{"file too large"}},
		{name: "SIGTERM during a multipart upload", multipart: true, exec: execWith(t, signalDuringUpload(syscall.SIGTERM)),
			rules: []faultproxy.Rule{{Op: faultproxy.UploadPart, Action: faultproxy.StallBeforeBody}}, wantCode: 1, wantLast: []string{"cancel"}},
		// The push comes before the summary, whatever the Pushgateway does.
		{name: "Pushgateway down", faultEnv: map[string]string{"PUSHGATEWAY_URL": withMatrixCreds("http://" + closedAddr(t))},
			wantLast: []string{`"metrics_push":"failed"`}},
		{name: "Pushgateway stalled", faultEnv: map[string]string{"PUSHGATEWAY_URL": withMatrixCreds(stalledServer(t))},
			wantLast: []string{`"metrics_push":"failed"`}, bounded: 90 * time.Second},
		{name: "Pushgateway 403", faultEnv: map[string]string{"PUSHGATEWAY_URL": withMatrixCreds(statusServer(t, http.StatusForbidden))},
			wantLast: []string{`"metrics_push":"failed"`}},
		// Passwords that no URL parser accepts.
		{name: "a # in the Kubecost password", configError: true, wantCode: cli.ExitConfig, secrets: []string{"pa55-66bb"},
			faultEnv: map[string]string{"KUBECOST_API_ENDPOINT": "http://admin:pa55-66bb#x@kubecost:9090"}, wantLast: []string{"KUBECOST_API_ENDPOINT"}},
		{name: "a space in the Kubecost user name", configError: true, wantCode: cli.ExitConfig, secrets: []string{"s3cr3t", "us er"},
			faultEnv: map[string]string{"KUBECOST_API_ENDPOINT": "http://us er:s3cr3t@127.0.0.1:1"}, wantLast: []string{"KUBECOST_API_ENDPOINT"}},
		// A long wrapped error keeps what failed and the innermost cause.
		{name: "Kubecost unreachable", wantCode: 1, wantLast: []string{"ask Kubecost for available days", "connection refused"},
			faultEnv: map[string]string{"KUBECOST_API_ENDPOINT": withMatrixCreds("http://" + closedAddr(t) + "/a/long/path/to/make/the/error/longer/than/the/summary/allows"), "KUBECOST_MAX_RETRIES": "0"}},
	} {
		t.Run(c.name, func(t *testing.T) { m.check(t, c) })
	}

	t.Run("codec switch with a failing delete", func(t *testing.T) {
		c := mcase{name: "codec switch with a failing delete"}
		env := m.caseEnv(c)
		prefix := env["S3_PREFIX"]
		if code, logs := m.runIn(env, cli.Hooks{Now: nowFor(c)}); code != cli.ExitOK {
			t.Fatalf("snappy run: exit %d\n%s", code, logs)
		}
		old := m.wantKeys(c, prefix)
		env["COMPRESSION"] = "zstd"
		m.proxy.SetRules(faultproxy.Rule{Op: faultproxy.DeleteObject, Action: faultproxy.Status, Status: 403, Code: "AccessDenied"})
		code, logs := m.runIn(env, cli.Hooks{Now: nowFor(c)})
		m.proxy.SetRules()
		last := checkOutput(t, logs, false)
		// Written is written: the new files landed; the delete is its own count.
		n := len(old)
		for _, w := range []string{fmt.Sprintf(`"days_written":%d,"days_failed":0`, n), fmt.Sprintf(`"deletes_failed":%d`, n), "AccessDenied"} {
			if !strings.Contains(last, w) {
				t.Errorf("last line lacks %s: %s", w, last)
			}
		}
		if code != cli.ExitRuntime {
			t.Errorf("exit %d, want 1 (the old files still double the days in queries)", code)
		}
		if got := len(m.keysUnder(prefix)); got != 2*n {
			t.Errorf("%d objects after the switch, want the %d new and the %d old", got, n, n)
		}
		// The next run removes the leftovers and writes nothing.
		code, logs = m.runIn(env, cli.Hooks{Now: nowFor(c)})
		checkOutput(t, logs, false)
		if code != cli.ExitOK || len(m.keysUnder(prefix)) != n || !strings.Contains(lastLine(logs), `"days_written":0`) {
			t.Errorf("healing run: exit %d, %d objects (want %d)\n%s", code, len(m.keysUnder(prefix)), n, logs)
		}
		for _, k := range m.keysUnder(prefix) {
			if !strings.HasSuffix(k, ".zstd.parquet") {
				t.Errorf("left over after healing: %s", k)
			}
		}
	})

	t.Run("kill -9 during a multipart upload", func(t *testing.T) {
		c := mcase{name: "kill -9 during a multipart upload", multipart: true, wantCode: -1,
			exec:  execWith(t, signalDuringUpload(syscall.SIGKILL)),
			rules: []faultproxy.Rule{{Op: faultproxy.UploadPart, Action: faultproxy.StallBeforeBody}}}
		prefix := m.caseEnv(c)["S3_PREFIX"]
		// Unfinished uploads that are not ours: another cluster's day file
		// under the same partition, and a key that is no day file at all.
		other := exporter.Layout{Prefix: prefix, Account: prod.Account, Region: prod.Region, Cluster: "prod-eu"}.Key(bigNow(), exporter.Snappy)
		notes := prod.PartitionPrefix()
		notes = prefix + notes + "notes.txt"
		for _, k := range []string{other, notes} {
			if _, err := m.s3.CreateMultipartUpload(context.Background(), &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(k)}); err != nil {
				t.Fatal(err)
			}
		}
		m.checkKilled(t, c, other, notes)
	})
}

// checkKilled runs a case whose child is killed mid-upload: the upload
// stays behind, a run within the hour leaves it alone (it could be a
// concurrent run's), and the next run after that aborts it and only it.
func (m *matrix) checkKilled(t *testing.T, c mcase, keep ...string) {
	env := m.caseEnv(c)
	prefix := env["S3_PREFIX"]
	m.proxy.SetRules(c.rules...)
	m.proxy.ResetLog()
	code, logs := c.exec(t, m, env)
	m.proxy.SetRules()
	if code != c.wantCode {
		t.Fatalf("exit %d, want %d (killed)\n%s", code, c.wantCode, logs)
	}
	left := m.uploads(t, prefix)
	if len(left) != len(keep)+1 {
		t.Fatalf("after kill -9: unfinished uploads %v, want ours and %v", left, keep)
	}
	// The next run, within the hour, writes the missing day and leaves the
	// upload alone: it could be a concurrent run's.
	m.proxy.ResetLog()
	code, logs = execWith(t, nil)(t, m, env)
	if code != cli.ExitOK || len(m.uploads(t, prefix)) != len(keep)+1 {
		t.Fatalf("a run within the hour: exit %d, uploads %v\n%s", code, m.uploads(t, prefix), logs)
	}
	want := m.wantKeys(c, prefix)
	writes := 0
	for _, k := range want {
		checkKey(t, m.harness, m.proj, k)
		writes += m.proxy.Count(faultproxy.PutObject, k, http.StatusOK) + m.proxy.Count(faultproxy.CompleteMultipartUpload, k, http.StatusOK)
	}
	if writes != len(want) {
		t.Errorf("the run after the kill wrote %d objects, want the %d missing", writes, len(want))
	}
	// A run an hour later aborts exactly ours, and logs it.
	code, logs = m.runIn(env, cli.Hooks{Now: nowFor(c), WallClock: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	if code != cli.ExitOK {
		t.Fatalf("a run an hour later: exit %d\n%s", code, logs)
	}
	if got := m.uploads(t, prefix); !sameSet(got, keep) {
		t.Fatalf("unfinished uploads after the run an hour later: %v, want only the others' %v", got, keep)
	}
	if !strings.Contains(logs, "aborted an unfinished upload left by an earlier run") {
		t.Errorf("the abort is not logged:\n%s", logs)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// binDir holds the commands built for these tests, once per test binary.
var binDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "kse-bin-")
	if err != nil {
		return "", err
	}
	out, err := exec.Command("go", "build", "-o", dir+"/",
		"github.com/kubecost-s3-exporter/kubecost-s3-exporter/cmd/kubecost-s3-exporter",
		"github.com/kubecost-s3-exporter/kubecost-s3-exporter/cmd/kubecost-sim").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return dir, nil
})

// buildBin returns the path of a command built without the race detector.
func buildBin(name string) (string, error) {
	dir, err := binDir()
	return filepath.Join(dir, name), err
}

// execWith runs the real exporter binary as a child process, under
// prlimit when limits are given, and calls during (if not nil) while it
// runs; it returns the exit status and the child's output. A child killed
// by a signal reports -1.
func execWith(t *testing.T, during func(t *testing.T, m *matrix, p *os.Process), limits ...string) func(*testing.T, *matrix, map[string]string) (int, string) {
	return func(t *testing.T, m *matrix, env map[string]string) (int, string) {
		bin, err := buildBin("kubecost-s3-exporter")
		if err != nil {
			t.Fatal(err)
		}
		args := []string{bin}
		if len(limits) > 0 {
			args = append(append([]string{"prlimit"}, limits...), bin)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = os.Environ()
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Env = append(cmd.Env, "TMPDIR="+t.TempDir())
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if during != nil {
			during(t, m, cmd.Process)
		}
		err = cmd.Wait()
		m.logs.Write(out.Bytes())
		if err != nil && cmd.ProcessState == nil {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), out.String()
	}
}

// signalDuringUpload waits until the child's first UploadPart is in
// flight (the proxy stalls it), then sends sig.
func signalDuringUpload(sig syscall.Signal) func(*testing.T, *matrix, *os.Process) {
	return func(t *testing.T, m *matrix, p *os.Process) {
		deadline := time.Now().Add(2 * time.Minute)
		for m.proxy.Started(faultproxy.UploadPart) == 0 {
			if time.Now().After(deadline) {
				p.Kill()
				t.Fatal("the child never started an UploadPart")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := p.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
}

// stalledServer accepts connections and never answers.
func stalledServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String()
}

// statusServer answers every request with status.
func statusServer(t *testing.T, status int) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
	t.Cleanup(s.Close)
	return s.URL
}
