package exporter

import (
	"net/url"
	"regexp"
	"strings"
)

// Redacted replaces every secret part of a URL.
const Redacted = "REDACTED"

// secretParamRE matches query parameter names that carry credentials:
// tokens, keys, passwords, signatures (X-Amz-Signature, X-Amz-Credential,
// X-Amz-Security-Token of a presigned URL), sessions.
var secretParamRE = regexp.MustCompile(`(?i)token|secret|pass|pwd|key|auth|sig|credential|session|cookie`)

// urlRE finds URLs inside free text such as error messages. It stops at
// whitespace and at the quotes and brackets that usually enclose a URL.
var urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s"'<>()\[\]{}]+`)

// userinfoRE is the fallback for strings url.Parse rejects.
var userinfoRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@]*@`)

// RedactURL returns raw with the user information and the values of
// secret-looking query parameters replaced by REDACTED. A string that does
// not parse as a URL still loses anything between "://" and "@", so an
// invalid endpoint in a configuration error cannot leak its password.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return redactQuery(userinfoRE.ReplaceAllString(raw, "${1}"+Redacted+"@"))
	}
	changed := false
	if u.User != nil {
		u.User = url.User(Redacted)
		changed = true
	}
	if u.RawQuery != "" {
		if q := redactQuery(u.RawQuery); q != u.RawQuery {
			u.RawQuery = q
			changed = true
		}
	}
	if !changed {
		return raw
	}
	return u.String()
}

// redactQuery blanks the values of secret-looking parameters in a raw
// query (or in anything after the first "?").
func redactQuery(s string) string {
	head, q, ok := strings.Cut(s, "?")
	if !ok {
		if strings.Contains(s, "://") {
			return s
		}
		head, q = "", s
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if hasValue && secretParamRE.MatchString(name) {
			parts[i] = name + "=" + Redacted
		}
	}
	out := strings.Join(parts, "&")
	if ok {
		return head + "?" + out
	}
	return out
}

// RedactText applies RedactURL to every URL inside s.
func RedactText(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlRE.ReplaceAllStringFunc(s, RedactURL)
}
