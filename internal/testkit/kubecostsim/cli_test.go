package kubecostsim

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
