// Package release_test checks the release path end to end, the way a user
// receives it: the image index and the chart are pushed to a real OCI
// registry (the CNCF distribution registry on 127.0.0.1), signed with
// cosign, pulled back, and the chart is installed from the registry on a
// real kube-apiserver. It also holds the workflows to the Makefile and the
// image build to the exporter's own dependencies.
package release_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/syncbuf"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
)

// startRegistry runs the distribution registry on a free loopback port with
// its storage in a temp dir, and returns host:port.
func startRegistry(t *testing.T) string {
	t.Helper()
	bin := tooltest.Require(t, "registry", "REGISTRY_BIN")
	dir := t.TempDir()
	for try := 0; ; try++ {
		addr := freeAddr(t)
		cfg := fmt.Sprintf(`version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
`, filepath.Join(dir, "data"), addr)
		cfgFile := filepath.Join(dir, "config.yml")
		if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "serve", cfgFile)
		// No tracing exporter: the registry would try to reach a collector.
		cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none", "OTEL_SDK_DISABLED=true")
		log := &syncbuf.Buffer{}
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatalf("registry: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() {
			_ = cmd.Process.Kill()
			<-exited
		}
		if err := waitHTTP(addr, exited); err == nil {
			t.Cleanup(func() {
				stop()
				if t.Failed() {
					t.Logf("--- registry log ---\n%s", tail(log.String(), 4<<10))
				}
			})
			return addr
		} else if try == 2 || !strings.Contains(log.String(), "address already in use") {
			stop()
			t.Fatalf("registry did not start: %v\n%s", err, log.String())
		}
		stop()
	}
}

// waitHTTP waits until GET /v2/ answers 200 (the registry's API check).
func waitHTTP(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("registry exited")
		default:
		}
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no answer on %s/v2/ in 30s", addr)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// run runs a tool with extra environment (for the child only) and returns
// its combined output; it fails the test on an error unless wantErr.
func run(t *testing.T, env []string, wantErr bool, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if wantErr && err == nil {
		t.Fatalf("%s %s succeeded, want a failure\n%s", filepath.Base(bin), strings.Join(args, " "), out.String())
	}
	if !wantErr && err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out.String())
	}
	return out.String()
}
