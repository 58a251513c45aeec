//go:build unix

package e2e_test

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/faultproxy"
)

// TestCodecSwitchKilledBetweenWriteAndDelete runs the exporter binary with
// COMPRESSION=zstd over a bucket of snappy days, kills it with SIGKILL
// while its first DELETE of an old snappy object is in flight, then runs a
// healthy exporter: afterwards every day is stored once, under .zstd, and
// no .snappy object remains.
func TestCodecSwitchKilledBetweenWriteAndDelete(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the exporter binary")
	}
	// The child has the real clock, so the simulator and the in-process
	// runs use it too.
	h := newHarnessAt(t, time.Now)
	bin := filepath.Join(t.TempDir(), "kubecost-s3-exporter")
	build := exec.Command("go", "build", "-o", bin, "github.com/kubecost-s3-exporter/kubecost-s3-exporter/cmd/kubecost-s3-exporter")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	code, logs := h.run(nil)
	if code != cli.ExitOK {
		t.Fatalf("run 1 exit %d\n%s", code, logs)
	}
	days := expectedDays(h.sim, 20)
	if got := slices.Sorted(maps.Keys(h.objects())); len(days) < 2 || !slices.Equal(got, keysOf(prod, exporter.Snappy, days)) {
		t.Fatalf("run 1 wrote %v", got)
	}

	// The proxy holds the first DELETE until the client goes away: the
	// moment between "new-codec object written" and "old object deleted".
	proxy, err := faultproxy.New(h.env["AWS_ENDPOINT_URL_S3"])
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	proxy.SetRules(faultproxy.Rule{Op: faultproxy.DeleteObject, Action: faultproxy.StallBeforeBody, Times: 1})

	env := os.Environ()
	for k, v := range h.env {
		env = append(env, k+"="+v)
	}
	env = append(env, "COMPRESSION=zstd", "AWS_ENDPOINT_URL_S3="+proxy.URL)
	child := exec.Command(bin, "run")
	child.Env = env
	var out bytes.Buffer
	child.Stdout, child.Stderr = &out, &out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for proxy.Started(faultproxy.DeleteObject) == 0 {
		select {
		case err := <-exited:
			t.Fatalf("the exporter exited (%v) before deleting anything\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatalf("no DELETE within 2 minutes\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := child.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	if err := <-exited; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child ended with %v, want killed", err)
	}
	// The held request is logged once the dead client's connection closes.
	var heldPath string
	for end := time.Now().Add(10 * time.Second); heldPath == "" && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		for _, e := range proxy.Log() {
			if e.Op == faultproxy.DeleteObject && e.Injected {
				heldPath = e.Key
			}
		}
	}

	// At most one extra file: the first day under both suffixes.
	first := days[0]
	if !strings.HasSuffix(heldPath, prod.Key(first, exporter.Snappy)) {
		t.Fatalf("held DELETE %s, want the first day's snappy key", heldPath)
	}
	want := append(keysOf(prod, exporter.Snappy, days), prod.Key(first, exporter.Zstd))
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(h.objects())); !slices.Equal(got, want) {
		t.Fatalf("after the kill the bucket holds\n%v\nwant one extra file\n%v", got, want)
	}

	// A healthy run finishes the switch and removes the leftover.
	code, logs = h.run(map[string]string{"COMPRESSION": "zstd"})
	if code != cli.ExitOK {
		t.Fatalf("healthy run exit %d\n%s", code, logs)
	}
	wantReasons(t, logs, reasonsFor(days, "config-changed", map[time.Time]string{first: "current"}))
	after := slices.Sorted(maps.Keys(h.objects()))
	if !slices.Equal(after, keysOf(prod, exporter.Zstd, days)) {
		t.Fatalf("after the healthy run the bucket holds\n%v\nwant every day once, under .zstd", after)
	}
	for _, k := range after {
		if strings.Contains(k, ".snappy.") {
			t.Errorf("old-suffix object %s remains", k)
		}
	}
}
