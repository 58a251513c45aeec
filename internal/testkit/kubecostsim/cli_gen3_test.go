package kubecostsim

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// -gen3 serves the frontend on the printed address and prints the
// aggregator's; the frontend strips /model/, the aggregator wants the
// required header.
func TestMainGen3(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"-gen3", "-require-header", "X-API-KEY: k", "-now", "2026-11-21T10:00:00Z"}, pw, &stderr)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var got []string
	for len(got) < 2 && lines.Scan() {
		got = append(got, lines.Text())
	}
	go io.Copy(io.Discard, pr)
	if len(got) != 2 || !strings.HasPrefix(got[0], "listening on http://") || !strings.HasPrefix(got[1], "AGGREGATOR=http://127.0.0.1:") {
		t.Fatalf("stdout %q", got)
	}
	frontend := strings.TrimPrefix(got[0], "listening on ")
	aggregator := strings.TrimPrefix(got[1], "AGGREGATOR=")
	q := "?window=2026-11-17T00:00:00Z,2026-11-18T00:00:00Z&aggregate=cluster&step=1d"
	for _, tc := range []struct {
		url, key string
		want     int
	}{
		{frontend + "/model/allocation" + q, "k", 200},
		{frontend + "/model/allocation" + q, "", 401},
		{aggregator + "/allocation" + q, "k", 200},
		{aggregator + "/model/allocation" + q, "k", 404},
	} {
		req, _ := http.NewRequest("GET", tc.url, nil)
		if tc.key != "" {
			req.Header.Set("X-API-KEY", tc.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s (key %q): %d, want %d", tc.url, tc.key, resp.StatusCode, tc.want)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	var discard bytes.Buffer
	if code := Main(context.Background(), []string{"-gen3", "-flavor", "opencost"}, &discard, &discard); code != 2 {
		t.Errorf("-gen3 -flavor opencost: exit %d, want 2", code)
	}
}
