package bytecount

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCounts: object GETs are counted with their body bytes, ranged ones
// apart; listings (GET ?list-type=2) and other methods are not; requests
// reach the target with their Host.
func TestCounts(t *testing.T) {
	var hosts []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts = append(hosts, r.Host)
		io.WriteString(w, strings.Repeat("x", 100))
	}))
	defer target.Close()
	p, err := Start(target.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	do := func(method, path, rng string) {
		req, _ := http.NewRequest(method, p.URL+path, nil)
		req.Host = "bucket.example"
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	do(http.MethodGet, "/b/k", "")
	do(http.MethodGet, "/b/k", "bytes=0-99")
	do(http.MethodGet, "/b?list-type=2", "")
	do(http.MethodHead, "/b/k", "")
	if g, r, b := p.GETs.Load(), p.Ranged.Load(), p.Bytes.Load(); g != 2 || r != 1 || b != 200 {
		t.Errorf("GETs %d, ranged %d, bytes %d; want 2, 1, 200", g, r, b)
	}
	if len(hosts) != 4 || hosts[0] != "bucket.example" {
		t.Errorf("hosts at the target %v", hosts)
	}
}
