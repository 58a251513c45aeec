package exporter

import (
	"regexp"
	"strings"
)

// Redacted replaces every secret part of a URL.
const Redacted = "REDACTED"

// secretParamRE matches query parameter names that carry credentials, also a presigned
// URL's X-Amz-Signature, X-Amz-Credential and X-Amz-Security-Token.
var secretParamRE = regexp.MustCompile(`(?i)token|secret|pass|pwd|key|auth|sig|credential|session|cookie`)

// Redact hides the credentials of every URL inside s: anything between "://" and the last
// "@" before the host, and the values of query parameters named like secrets. Every log
// line, error and configuration message passes through it.
//
// It does not parse URLs: those that most need it are the ones a parser refuses (a password
// holding "#", "@", "%zz" or a space). A URL ends at a quote, a bracket, a line break, ": "
// or ", " (how errors join parts), or the next URL; a space too, except inside the user
// information ("http://us er:pw@host" hides "us er:pw"). What may be user information is hidden.
func Redact(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		rest := s[i+3:]
		end := urlEnd(rest)
		b.WriteString(redactURLBody(rest[:end]))
		s = rest[end:]
	}
}

// urlEnd is the length of the URL body at the start of s (after "://"), spaces included:
// redactURLBody decides what a space means.
func urlEnd(s string) int {
	// Square brackets do not end a URL: they enclose an IPv6 host.
	end := len(s)
	if j := strings.IndexAny(s, "\"'`<>(){}\n\r\t"); j >= 0 {
		end = j
	}
	for _, sep := range []string{": ", ", ", "://"} {
		if j := strings.Index(s[:end], sep); j >= 0 {
			end = j
			if sep == "://" {
				// The next URL's scheme is not part of this one.
				for end > 0 && isSchemeByte(s[end-1]) {
					end--
				}
			}
		}
	}
	return end
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'
}

// redactURLBody hides the user information and secret query values of body (after "://").
func redactURLBody(body string) string {
	// The user information ends at the last "@" with no "/" before it: a path never
	// precedes the host, a password may hold "@", "#", "?" or ":".
	host := body
	if slash := strings.IndexByte(body, '/'); slash >= 0 {
		host = body[:slash]
	}
	at := strings.LastIndexByte(host, '@')
	// A space is user information only in "user:password" form; elsewhere it ends the URL,
	// and an "@" after it is prose.
	end := len(body)
	if sp := strings.IndexByte(body, ' '); sp >= 0 && (at < 0 || sp < at && !strings.Contains(body[:at], ":")) {
		end, at = sp, strings.LastIndexByte(body[:sp], '@')
	} else if sp := strings.IndexByte(body[max(at, 0):], ' '); sp >= 0 {
		end = max(at, 0) + sp
	}
	url := body[:end]
	if at >= 0 {
		url = Redacted + url[at:]
	}
	return redactQuery(url) + body[end:]
}

// redactQuery blanks the values of secret-looking parameters after a URL body's first "?".
func redactQuery(body string) string {
	head, q, ok := strings.Cut(body, "?")
	if !ok {
		return body
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if hasValue && secretParamRE.MatchString(name) {
			parts[i] = name + "=" + Redacted
		}
	}
	return head + "?" + strings.Join(parts, "&")
}
