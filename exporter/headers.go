package exporter

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strings"
)

// HeadersSetting is the variable naming Kubecost's request headers file, named in errors.
const HeadersSetting = "KUBECOST_HTTP_HEADERS_FILE"

// reservedHeaders may not be set by a headers file: net/http writes them (framing,
// connection, host) or the client needs them (Accept: the JSON check), and a wrong value
// would break every request in ways that do not look like a credentials problem.
var reservedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true,
	"Keep-Alive": true, "Upgrade": true, "Te": true, "Trailer": true, "Proxy-Connection": true,
	"Accept": true, "Accept-Encoding": true,
}

// ParseHeaders parses the request headers file (HeadersSetting): "Name: value" lines, the
// credentials an SSO-enabled Kubecost wants (X-API-KEY, Authorization, a proxy's cookie).
// Blank and '#' lines are skipped; values are trimmed of spaces and tabs. Parsing is strict,
// as a silently dropped header is a 401 an hour later: no colon, a name that is not an HTTP
// token, an empty value, a control character, a repeated or reserved header is an error
// naming the line. No error holds a value or a line's text: it may be a secret.
func ParseHeaders(data []byte) (http.Header, error) {
	h := http.Header{}
	first := map[string]int{} // canonical name → line it was set on
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 1; sc.Scan(); n++ {
		// bufio.ScanLines drops one CR (Windows); a second is part of the line, as in
		// net/textproto. Only space and tab are trimmed, as textproto does (FuzzParseHeaders
		// holds it): a wider trim would send "v\u00a0" as "v" and take "v\v" for "v" where
		// net/http refuses the line.
		line := sc.Text()
		trimmed := strings.Trim(line, " \t")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%s line %d: want \"Name: value\", found no colon", HeadersSetting, n)
		}
		if !isToken(name) {
			return nil, fmt.Errorf("%s line %d: the header name is not an HTTP token (letters, digits and !#$%%&'*+-.^_`|~, no spaces)",
				HeadersSetting, n)
		}
		canon := http.CanonicalHeaderKey(name)
		value = strings.Trim(value, " \t")
		switch {
		case reservedHeaders[canon]:
			return nil, fmt.Errorf("%s line %d: header %s is set by the exporter itself and cannot be given", HeadersSetting, n, canon)
		case value == "":
			return nil, fmt.Errorf("%s line %d: header %s has an empty value", HeadersSetting, n, canon)
		case !validValue(value):
			return nil, fmt.Errorf("%s line %d: the value of header %s holds a control character", HeadersSetting, n, canon)
		case first[canon] > 0:
			return nil, fmt.Errorf("%s line %d: header %s is already set on line %d", HeadersSetting, n, canon, first[canon])
		}
		first[canon] = n
		h.Set(canon, value)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", HeadersSetting, err)
	}
	if len(h) == 0 {
		return nil, fmt.Errorf("%s holds no header (want \"Name: value\" lines)", HeadersSetting)
	}
	return h, nil
}

// tokenChars are the characters of an RFC 9110 token, what a field name is.
const tokenChars = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool { return s != "" && strings.Trim(s, tokenChars) == "" }

// validValue reports whether s has no control character but tab (a CR or LF would start
// another header line).
func validValue(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f })
}
