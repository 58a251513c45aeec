package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeHeaderFiles writes valid KUBECOST_HTTP_HEADERS_FILE files.
func writeHeaderFiles(t *testing.T) []string {
	dir := t.TempDir()
	var out []string
	for i, body := range []string{"X-API-KEY: k\n", "# comment\n\nAuthorization: Basic dXNlcjpwdw==\r\nX-Team: a b\n"} {
		p := filepath.Join(dir, "headers"+string(rune('0'+i)))
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestDiscoveryConfig: an unset endpoint means discovery under the
// namespace and release; a set one is used as it is; other flavours need
// their URL.
func TestDiscoveryConfig(t *testing.T) {
	t.Parallel()
	c, err := loadWith(map[string]string{"KUBECOST_NAMESPACE": "finops", "KUBECOST_RELEASE": "kc"})
	if err != nil {
		t.Fatal(err)
	}
	// The names are kubecost.Candidates' (TestCandidates); cli asks it.
	if !c.Discovering() || c.KubecostNamespace != "finops" || c.KubecostRelease != "kc" {
		t.Errorf("Discovering() = %v, namespace %q, release %q", c.Discovering(), c.KubecostNamespace, c.KubecostRelease)
	}
	c.KubecostAPIEndpoint = "http://kc-frontend.finops:9090" // what discovery sets
	if got := c.AllocationURL(); got != "http://kc-frontend.finops:9090/model/allocation" {
		t.Errorf("AllocationURL = %q", got)
	}
	c, err = loadWith(map[string]string{"KUBECOST_API_ENDPOINT": "http://kubecost-aggregator.kubecost:9004", "KUBECOST_API_FLAVOR": "cost-model"})
	if err != nil || c.Discovering() || c.AllocationURL() != "http://kubecost-aggregator.kubecost:9004/allocation" {
		t.Errorf("set endpoint: %v, %v", err, c)
	}
	for _, flavor := range []string{"opencost", "cost-model"} {
		_, err := loadWith(map[string]string{"KUBECOST_API_FLAVOR": flavor})
		if msg := checkOneError(err, "KUBECOST_API_ENDPOINT", "", "required with KUBECOST_API_FLAVOR="+flavor); msg != "" {
			t.Error(msg)
		}
	}
}

// TestHeadersFileConfig: a bad file is a configuration error naming the
// variable and the line, never the value; an Authorization header and a
// bearer token together are refused.
func TestHeadersFileConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "X-API-KEY: s3cr3t-value\n")
	c, err := loadWith(map[string]string{"KUBECOST_HTTP_HEADERS_FILE": good})
	if err != nil || c.Headers().Get("X-Api-Key") != "s3cr3t-value" {
		t.Fatalf("%v %v", err, c.Headers())
	}
	bad := write("bad", "X-API-KEY: ok\nX-Other s3cr3t-value\n")
	_, err = loadWith(map[string]string{"KUBECOST_HTTP_HEADERS_FILE": bad})
	if msg := checkOneError(err, "KUBECOST_HTTP_HEADERS_FILE", bad, "line 2: want \"Name: value\""); msg != "" {
		t.Error(msg)
	}
	if err != nil && strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("the error shows the value: %v", err)
	}
	auth := write("auth", "Authorization: Basic x\n")
	_, err = loadWith(map[string]string{"KUBECOST_HTTP_HEADERS_FILE": auth, "KUBECOST_BEARER_TOKEN_FILE": "/t"})
	if msg := checkOneError(err, "KUBECOST_HTTP_HEADERS_FILE", auth, "an Authorization header and a bearer token"); msg != "" {
		t.Error(msg)
	}
}
