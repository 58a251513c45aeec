package exporter

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://kubecost:9090", "http://kubecost:9090"},
		{"http://admin:hunter2@kubecost:9090/model", "http://REDACTED@kubecost:9090/model"},
		{"https://tok@host/x?window=1d&token=abc&X-Amz-Signature=ff", "https://REDACTED@host/x?window=1d&token=REDACTED&X-Amz-Signature=REDACTED"},
		{"http://a:b@host:bad port", "http://REDACTED@host:bad port"},
		{"ftp//user:pw@x?password=pw", "ftp//user:pw@x?password=REDACTED"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactText(t *testing.T) {
	in := `Get "http://u:hunter2@127.0.0.1:9/model/allocation?window=x&apikey=hunter2": dial tcp: refused`
	got := RedactText(in)
	if strings.Contains(got, "hunter2") {
		t.Fatalf("secret left in %q", got)
	}
	if !strings.Contains(got, "127.0.0.1:9/model/allocation?window=x") || !strings.HasSuffix(got, ": dial tcp: refused") {
		t.Fatalf("RedactText changed more than the secrets: %q", got)
	}
}
