package exporter

import (
	"strings"
	"testing"
)

// TestRedact holds the one redaction to hostile URLs: every secret is
// gone, and what is not secret stays as it was.
func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://kubecost:9090", "http://kubecost:9090"},
		{"http://kubecost:9090/model/allocation?window=1d", "http://kubecost:9090/model/allocation?window=1d"},
		{"http://admin:hunter2@kubecost:9090/model", "http://REDACTED@kubecost:9090/model"},
		{"https://tok@host/x?window=1d&token=abc&X-Amz-Signature=ff", "https://REDACTED@host/x?window=1d&token=REDACTED&X-Amz-Signature=REDACTED"},
		// "#" in the password: a URL parser takes the rest for a fragment.
		{"http://admin:pa55-66bb#x@kubecost:9090", "http://REDACTED@kubecost:9090"},
		// "@" inside the password: the last one before the host counts.
		{"http://admin:p@ss@w0rd@kubecost:9090/x", "http://REDACTED@kubecost:9090/x"},
		// A space in the user name, quoted as configuration errors quote.
		{`KUBECOST_API_ENDPOINT="http://us er:s3cr3t@127.0.0.1:1": invalid`, `KUBECOST_API_ENDPOINT="http://REDACTED@127.0.0.1:1": invalid`},
		// ... and unquoted.
		{"endpoint http://us er:s3cr3t@127.0.0.1:1 is invalid", "endpoint http://REDACTED@127.0.0.1:1 is invalid"},
		{"http://user:pa ss@host:9090/x", "http://REDACTED@host:9090/x"},
		// Percent-escapes, valid and invalid.
		{"http://user:p%40ss@host", "http://REDACTED@host"},
		{"http://user:p%zz@host:1/x", "http://REDACTED@host:1/x"},
		// IPv6 hosts.
		{"http://u:pw@[::1]:9090/model", "http://REDACTED@[::1]:9090/model"},
		{"http://[fe80::1%25eth0]:9090/x", "http://[fe80::1%25eth0]:9090/x"},
		// User information without a password.
		{"http://token123@host/x", "http://REDACTED@host/x"},
		// Tokens in query strings, any case, without user information.
		{"http://host/x?ApiKey=k1&a=b&session_id=s2&sig=s3", "http://host/x?ApiKey=REDACTED&a=b&session_id=REDACTED&sig=REDACTED"},
		// Inside error text: two URLs, quotes, and the ": " of wrapping.
		{`Get "http://u:hunter2@127.0.0.1:9/a?token=hunter2": dial tcp: refused; retry https://v:pw2@h2/b`,
			`Get "http://REDACTED@127.0.0.1:9/a?token=REDACTED": dial tcp: refused; retry https://REDACTED@h2/b`},
		// An "@" in a path is not user information.
		{"http://host:9090/users/@me?x=1", "http://host:9090/users/@me?x=1"},
		// Prose with an "@" right after a URL cannot be told from a
		// password with a space: it is hidden rather than shown.
		{"pushed to http://gw:9091 for ops@example.com", "pushed to http://REDACTED@example.com"},
		{"pushed to http://gw:9091/x for ops@example.com", "pushed to http://gw:9091/x for ops@example.com"},
		{"no url here: user:pw@host", "no url here: user:pw@host"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// FuzzRedact checks that a password placed in any URL-ish text never
// survives redaction, whatever surrounds it.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"admin", "us er", "a#b", "p@ss", "x%zz", "", "[::1]"} {
		f.Add(s, "host:9090", "/path?q=1")
	}
	f.Fuzz(func(t *testing.T, user, host, path string) {
		const secret = "Zq9SECRETzQ"
		if strings.ContainsAny(user+host, "\"'`<>(){}\n\r\t/") || strings.Contains(user+host+path, "://") ||
			strings.Contains(user, ": ") || strings.Contains(user, ", ") || strings.ContainsAny(host, "@ ") || host == "" {
			t.Skip()
		}
		in := "http://" + user + ":" + secret + "@" + host + path
		if got := Redact(in); strings.Contains(got, secret) {
			t.Fatalf("Redact(%q) = %q keeps the password", in, got)
		}
	})
}
