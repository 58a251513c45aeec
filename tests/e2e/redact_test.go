package e2e_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
)

// TestNoCredentialsInOutput runs the exporter with credentials in the
// Kubecost and STS endpoint URLs, valid and invalid, and scans everything
// it prints.
func TestNoCredentialsInOutput(t *testing.T) {
	h := newHarness(t)
	const user, secret = "kubeuser", "s3cr3tPW"
	withCreds := func(u string) string { return strings.Replace(u, "://", "://"+user+":"+secret+"@", 1) }
	for _, tc := range []struct {
		name string
		env  map[string]string
		code int
		want string // in the output
	}{
		{"valid endpoint with a password", map[string]string{
			"KUBECOST_API_ENDPOINT": withCreds(h.sim.URL), "AWS_ENDPOINT_URL_STS": withCreds("http://" + closedAddr(t)),
		}, cli.ExitOK, "run summary: ok"},
		{"unreachable endpoint with a password", map[string]string{
			"KUBECOST_API_ENDPOINT": withCreds("http://" + closedAddr(t)), "KUBECOST_MAX_RETRIES": "0",
		}, cli.ExitRuntime, "REDACTED@127.0.0.1"},
		{"invalid endpoint with a password", map[string]string{
			"KUBECOST_API_ENDPOINT": withCreds("http://kubecost:90x90/path?token=" + secret),
		}, cli.ExitConfig, "KUBECOST_API_ENDPOINT"},
		{"invalid endpoint, unparsable", map[string]string{
			"KUBECOST_API_ENDPOINT": "http://" + user + ":" + secret + "@bad host:9090",
		}, cli.ExitConfig, "KUBECOST_API_ENDPOINT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) {
				if v, ok := tc.env[k]; ok {
					return v, true
				}
				v, ok := h.env[k]
				if k == "S3_PREFIX" {
					return "redact/", true
				}
				return v, ok
			}
			var out bytes.Buffer
			code := cli.RunWith(context.Background(), lookup, &out, cli.Hooks{Now: func() time.Time { return now }})
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, out.String())
			}
			if strings.Contains(out.String(), secret) || strings.Contains(out.String(), user) {
				t.Fatalf("credentials in the output:\n%s", out.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Fatalf("output lacks %q:\n%s", tc.want, out.String())
			}
		})
	}
}
