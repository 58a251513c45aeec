package destination

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTLS: ca_file makes a server with a private CA trusted, server_name
// and http_config.insecure_skip_verify reach the TLS config, and a file
// without http_config has none (the system's roots apply).
func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	get := func(doc string) error {
		f, err := Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := f.TLS()
		if err != nil {
			return err
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := c.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	withCA := base + "  http_config:\n    tls_config:\n      ca_file: " + ca + "\n      server_name: example.com\n"
	if err := get(withCA); err != nil {
		t.Errorf("with ca_file: %v", err)
	}
	if err := get(base); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without ca_file the private CA must not be trusted: %v", err)
	}
	if err := get(base + "  http_config:\n    insecure_skip_verify: true\n"); err != nil {
		t.Errorf("insecure_skip_verify: %v", err)
	}
	// objstore's transport takes http_config's flag over tls_config's, so
	// tls_config's alone still verifies, and the log says it has no effect.
	tlsOnly := base + "  http_config:\n    tls_config:\n      insecure_skip_verify: true\n"
	if err := get(tlsOnly); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("tls_config.insecure_skip_verify alone must not turn verification off: %v", err)
	}
	if f, _ := Parse([]byte(tlsOnly)); len(f.Notices()) != 1 || !strings.Contains(f.Notices()[0], "tls_config.insecure_skip_verify") {
		t.Errorf("notices %q", f.Notices())
	}
	f, _ := Parse([]byte(base))
	if cfg, err := f.TLS(); cfg != nil || err != nil {
		t.Errorf("no http_config gave %v, %v", cfg, err)
	}
	bad, _ := Parse([]byte(base + "  http_config:\n    tls_config:\n      ca_file: " + filepath.Join(t.TempDir(), "none.pem") + "\n"))
	if _, err := bad.TLS(); err == nil || !strings.Contains(err.Error(), "ca_file") {
		t.Errorf("missing ca_file: %v", err)
	}
}
