package kubecostsim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The command renders the same response the server would send, and
// rejects bad flags with status 2 without writing a partial file.
func TestMainRender(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "day.json")
	var stdout, stderr bytes.Buffer
	args := []string{"-now", "2026-11-10T00:00:00Z", "-cluster", "c1", "-out", out,
		"-render", "window=2026-11-01T00:00:00Z,2026-11-02T00:00:00Z&aggregate=cluster&step=1d"}
	if code := Main(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Code int                          `json:"code"`
		Data []map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || resp.Code != 200 || len(resp.Data) != 1 || resp.Data[0]["c1"] == nil {
		t.Fatalf("rendered %d bytes: code %d, %d sets, err %v; want one set for cluster c1", len(b), resp.Code, len(resp.Data), err)
	}

	badOut := filepath.Join(t.TempDir(), "bad.json")
	for _, bad := range [][]string{
		{"-quirks", "bogus"},
		{"-fault", "sometimes"},
		{"-now", "yesterday"},
		{"-no-such-flag"},
		{"-render", "window=not-a-window", "-out", badOut},
	} {
		stderr.Reset()
		if code := Main(context.Background(), bad, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, code, strings.TrimSpace(stderr.String()))
		}
	}
	if _, err := os.Stat(badOut); !os.IsNotExist(err) {
		t.Errorf("a rejected -render left %s behind (%v)", badOut, err)
	}
}

// -federated serves the demo fleet and prints, after the address line, the
// exporter's CLUSTER_ARNS for it; the flavour flag applies.
func TestMainFederated(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"-federated", "-flavor", "opencost", "-now", "2026-11-21T10:00:00Z"}, pw, &stderr)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var got []string
	for len(got) < 2 && lines.Scan() {
		got = append(got, lines.Text())
	}
	go io.Copy(io.Discard, pr) // keep the pipe drained until Main returns
	if len(got) != 2 || !strings.HasPrefix(got[0], "listening on http://") {
		t.Fatalf("stdout %q", got)
	}
	fleet := NewFleet(DemoFleet(func() time.Time { return fleetNow }, FlavorOpenCost))
	if want := "CLUSTER_ARNS=" + fleet.ClusterARNs(); got[1] != want || len(fleet.Members()) < 4 {
		t.Errorf("second line %q, want %q", got[1], want)
	}
	base := strings.TrimPrefix(got[0], "listening on ")
	q := url.Values{"window": {"2026-11-17T00:00:00Z,2026-11-18T00:00:00Z"}, "aggregate": {"cluster"}, "step": {"1d"}, "filter": {`cluster:"staging"`}}
	for path, want := range map[string]int{"/allocation/compute": 200, "/model/allocation": 404} {
		resp, err := http.Get(base + path + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Data []map[string]json.RawMessage }
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != want || want == 200 && (len(body.Data) != 1 || len(body.Data[0]) == 0) {
			t.Errorf("%s: status %d, sets %v; want %d with staging's rows", path, resp.StatusCode, body.Data, want)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	var discard bytes.Buffer
	if code := Main(context.Background(), []string{"-federated", "-render", "window=1d"}, &discard, &discard); code != 2 {
		t.Errorf("-federated -render: exit %d, want 2", code)
	}
}
