package kubecost

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// HeadersSetting is the variable that names the request headers file,
// named in errors so that a user knows what to fix.
const HeadersSetting = "KUBECOST_HTTP_HEADERS_FILE"

// reservedHeaders are the headers a headers file may not set: net/http
// writes them itself (framing, the connection, the host), or the client
// depends on them (Accept: the JSON check), and a wrong value would break
// every request in ways that do not look like a credentials problem.
var reservedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true,
	"Keep-Alive": true, "Upgrade": true, "Te": true, "Trailer": true, "Proxy-Connection": true,
	"Accept": true, "Accept-Encoding": true,
}

// HeadersFile reads request headers from a file (KUBECOST_HTTP_HEADERS_FILE),
// as ParseHeaders parses them.
func HeadersFile(path string) (http.Header, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubecost: %s: %w", HeadersSetting, err)
	}
	return ParseHeaders(b)
}

// ParseHeaders parses "Name: value" lines: the credentials an SSO-enabled
// Kubecost wants (an X-API-KEY, an Authorization header, a cookie a proxy
// checks). Blank lines and lines starting with '#' are skipped; the value
// is trimmed of surrounding spaces. Parsing is strict, because a header
// silently dropped is a 401 an hour later: a line without a colon, a name
// that is not an HTTP token, an empty value, a control character, a
// header given twice or one net/http owns is an error naming the line.
// No error ever holds a value, nor the text of a line: it may be a secret.
func ParseHeaders(data []byte) (http.Header, error) {
	h := http.Header{}
	first := map[string]int{} // canonical name → line it was set on
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("kubecost: %s line %d: want \"Name: value\", found no colon", HeadersSetting, n)
		}
		if name != strings.TrimSpace(name) || !isToken(name) {
			return nil, fmt.Errorf("kubecost: %s line %d: header name %q is not an HTTP token (letters, digits and !#$%%&'*+-.^_`|~, no spaces)",
				HeadersSetting, n, sanitize(name, 40))
		}
		canon := http.CanonicalHeaderKey(name)
		value = strings.TrimSpace(value)
		switch {
		case reservedHeaders[canon]:
			return nil, fmt.Errorf("kubecost: %s line %d: header %s is set by the exporter itself and cannot be given", HeadersSetting, n, canon)
		case value == "":
			return nil, fmt.Errorf("kubecost: %s line %d: header %s has an empty value", HeadersSetting, n, canon)
		case !validValue(value):
			return nil, fmt.Errorf("kubecost: %s line %d: the value of header %s holds a control character", HeadersSetting, n, canon)
		case first[canon] > 0:
			return nil, fmt.Errorf("kubecost: %s line %d: header %s is already set on line %d", HeadersSetting, n, canon, first[canon])
		}
		first[canon] = n
		h.Set(canon, value)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("kubecost: %s: %w", HeadersSetting, err)
	}
	if len(h) == 0 {
		return nil, fmt.Errorf("kubecost: %s holds no header (want \"Name: value\" lines)", HeadersSetting)
	}
	return h, nil
}

// isToken reports whether s is an RFC 9110 token, what a field name is.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validValue reports whether s may be sent as a field value: no control
// characters but tab (a CR or LF would start another header line).
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// secrets are the strings no error of the client may show: the values
// of the configured headers and the bearer token. A server that echoes
// the key it refused ("invalid API key abc...") would otherwise put the
// credential into the run's log.
func secrets(h http.Header, bearer string) []string {
	var out []string
	for _, vs := range h {
		for _, v := range vs {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	if bearer != "" {
		out = append(out, bearer)
	}
	return out
}

// hideSecrets replaces every secret in s with exporter's redaction mark.
func hideSecrets(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, exporter.Redacted)
	}
	return s
}

// authHint is what a 401 or 403 tells the user to check: the settings
// that carry credentials, the one in use first.
func (c *Client) authHint() string {
	switch {
	case len(c.opts.Headers) > 0:
		return "Kubecost refused the credentials: check the headers in " + HeadersSetting +
			" (e.g. the X-API-KEY of a Kubecost service account, or an Authorization header)"
	case c.opts.BearerToken != "":
		return "Kubecost refused the bearer token: check KUBECOST_BEARER_TOKEN_FILE or KUBECOST_BEARER_TOKEN_SECRET_NAME, " +
			"or give other credentials in " + HeadersSetting
	}
	return "Kubecost requires authentication (SSO with SAML or OIDC): give its credentials as request headers in " + HeadersSetting +
		" (e.g. X-API-KEY: <key>), or a bearer token in KUBECOST_BEARER_TOKEN_FILE or KUBECOST_BEARER_TOKEN_SECRET_NAME, " +
		"or point KUBECOST_API_ENDPOINT at the aggregator's in-cluster port 9008 (Kubecost 3.x tcp-api-rbac)"
}
