package e2e_test

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/faultproxy"
)

// TestConcurrentRuns is the post-install hook Job and a scheduled run at
// once, in the matrix's setting: two runs on the same empty prefix.
func TestConcurrentRuns(t *testing.T) {
	m := newMatrix(t)
	c := mcase{name: "two runs at once"}
	env := m.caseEnv(c)
	prefix := env["S3_PREFIX"]
	m.proxy.ResetLog()

	var wg sync.WaitGroup
	codes, logs := make([]int, 2), make([]string, 2)
	for i := range 2 {
		wg.Go(func() { codes[i], logs[i] = m.runIn(env, cli.Hooks{Now: nowFor(c)}) })
	}
	wg.Wait()
	for i := range 2 {
		if codes[i] != cli.ExitOK {
			t.Fatalf("run %d: exit %d\n%s", i, codes[i], logs[i])
		}
		if last := lastLine(logs[i]); len(last) > 300 {
			t.Errorf("run %d: last line has %d chars", i, len(last))
		}
	}
	want := m.wantKeys(c, prefix)
	lost := 0
	for _, k := range want {
		// Exactly one write of each day succeeded on the server; the other
		// run's attempt, if it got that far, was refused with 412.
		if n := m.proxy.Count(faultproxy.PutObject, k, http.StatusOK); n != 1 {
			t.Errorf("%s: %d successful PutObjects, want exactly 1", k, n)
		}
		lost += m.proxy.Count(faultproxy.PutObject, k, http.StatusPreconditionFailed)
		checkKey(t, m.harness, m.proj, k)
	}
	got := 0
	for k := range m.objects() {
		if strings.HasPrefix(k, prefix) {
			got++
		}
	}
	if got != len(want) {
		t.Errorf("%d objects, want %d", got, len(want))
	}
	logged := strings.Count(logs[0]+logs[1], "another run wrote this day first")
	if logged != lost {
		t.Errorf("%d lost races logged, %d refused with 412 by the server", logged, lost)
	}
	t.Logf("%d days, %d writes lost to the other run", len(want), lost)
}

// TestStalePlanNeverOverwritesNewer: a run that forces a day (FORCE_DATES)
// plans against the version it listed. When another writer replaces the
// object between planning and upload, the run must not overwrite the newer
// object: it counts the day as done by someone else and exits 0.
func TestStalePlanNeverOverwritesNewer(t *testing.T) {
	m := newMatrix(t)
	c := mcase{name: "stale plan"}
	env := m.caseEnv(c)
	if code, logs := m.runIn(env, cli.Hooks{Now: nowFor(c)}); code != cli.ExitOK {
		t.Fatalf("first run: exit %d\n%s", code, logs)
	}
	key := m.wantKeys(c, env["S3_PREFIX"])[0]
	day := key[strings.LastIndexByte(key, '/')+1:][:10]
	forced := maps.Clone(env)
	forced["FORCE_DATES"] = day

	newer := "a newer object written by another run"
	m.proxy.SetRules(faultproxy.Rule{Op: faultproxy.PutObject, Key: key, Action: faultproxy.Hook, Times: 1, Fn: func(*http.Request) {
		// Another writer replaces the object after our run listed it.
		if _, err := m.s3.PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(newer),
		}); err != nil {
			t.Error(err)
		}
	}})
	defer m.proxy.SetRules()
	m.proxy.ResetLog()
	code, logs := m.runIn(forced, cli.Hooks{Now: nowFor(c)})
	if code != cli.ExitOK {
		t.Fatalf("forced run: exit %d\n%s", code, logs)
	}
	if got := string(m.get(key)); got != newer {
		t.Fatalf("the forced run overwrote the newer object (%d bytes now)", len(got))
	}
	if n := m.proxy.Count(faultproxy.PutObject, key, http.StatusPreconditionFailed); n != 1 {
		t.Errorf("%d PutObjects refused with 412, want 1", n)
	}
	if !strings.Contains(logs, "another run wrote this day first") || !strings.Contains(lastLine(logs), `"days_written_by_another_run":1`) {
		t.Errorf("the lost race is not reported:\n%s", logs)
	}

	// Without interference the same forced run replaces the object.
	m.proxy.SetRules()
	if code, logs := m.runIn(forced, cli.Hooks{Now: nowFor(c)}); code != cli.ExitOK || string(m.get(key)) == newer {
		t.Fatalf("forced run without interference: exit %d, object not replaced\n%s", code, logs)
	}
	checkKey(t, m.harness, m.proj, key)
}
