package awsfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// sigv4 is the parsed Authorization header of a SigV4-signed request:
// AWS4-HMAC-SHA256 Credential=AKID/20240101/us-east-1/sts/aws4_request,
// SignedHeaders=host;x-amz-date, Signature=<hex>
type sigv4 struct {
	AccessKeyID   string
	Date          string // YYYYMMDD from the credential scope
	Region        string
	Service       string
	SignedHeaders []string
	Signature     string
}

var errUnsigned = errors.New("request is not signed")

func parseSigV4(header string) (sigv4, error) {
	var s sigv4
	if header == "" {
		return s, errUnsigned
	}
	rest, ok := strings.CutPrefix(header, "AWS4-HMAC-SHA256 ")
	if !ok {
		return s, fmt.Errorf("unsupported authorization scheme")
	}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			f := strings.Split(v, "/")
			if len(f) != 5 || f[4] != "aws4_request" {
				return s, fmt.Errorf("malformed credential scope %q", v)
			}
			s.AccessKeyID, s.Date, s.Region, s.Service = f[0], f[1], f[2], f[3]
		case "SignedHeaders":
			s.SignedHeaders = strings.Split(v, ";")
		case "Signature":
			s.Signature = v
		}
	}
	if s.AccessKeyID == "" || len(s.SignedHeaders) == 0 || s.Signature == "" {
		return s, fmt.Errorf("incomplete authorization header")
	}
	return s, nil
}

// verify recomputes the signature of r (whose body was already read into
// body) with secret, following the published SigV4 algorithm, and reports
// a mismatch. Recomputing rather than trusting the access key ID is what
// makes "AssumeRole was signed by the child" a real check.
func (s sigv4) verify(r *http.Request, body []byte, secret string) error {
	amzDate := r.Header.Get("X-Amz-Date")
	if len(amzDate) != len("20060102T150405Z") || !strings.HasPrefix(amzDate, s.Date) {
		return fmt.Errorf("X-Amz-Date %q does not match the credential scope date %s", amzDate, s.Date)
	}
	signed := map[string]bool{}
	for _, h := range s.SignedHeaders {
		signed[h] = true
	}
	for _, must := range []string{"host", "x-amz-date"} {
		if !signed[must] {
			return fmt.Errorf("%s is not a signed header", must)
		}
	}
	if r.Header.Get("X-Amz-Security-Token") != "" && !signed["x-amz-security-token"] {
		return fmt.Errorf("x-amz-security-token is not a signed header")
	}

	payloadHash := r.Header.Get("X-Amz-Content-Sha256")
	sum := sha256.Sum256(body)
	if payloadHash == "" {
		payloadHash = hex.EncodeToString(sum[:])
	} else if payloadHash != hex.EncodeToString(sum[:]) {
		return fmt.Errorf("x-amz-content-sha256 does not match the body")
	}

	var canon strings.Builder
	canon.WriteString(r.Method + "\n")
	canon.WriteString(canonicalPath(r.URL) + "\n")
	canon.WriteString(canonicalQuery(r.URL.Query()) + "\n")
	for _, h := range s.SignedHeaders {
		canon.WriteString(h + ":" + headerValue(r, h) + "\n")
	}
	canon.WriteString("\n" + strings.Join(s.SignedHeaders, ";") + "\n" + payloadHash)

	scope := strings.Join([]string{s.Date, s.Region, s.Service, "aws4_request"}, "/")
	canonHash := sha256.Sum256([]byte(canon.String()))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(canonHash[:])

	key := hmacSHA256([]byte("AWS4"+secret), s.Date)
	for _, part := range []string{s.Region, s.Service, "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	if !hmac.Equal([]byte(want), []byte(s.Signature)) {
		return fmt.Errorf("signature does not match")
	}
	return nil
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func headerValue(r *http.Request, name string) string {
	switch name {
	case "host":
		return r.Host
	case "content-length":
		// net/http moves Content-Length out of the header map on the server.
		return strconv.FormatInt(r.ContentLength, 10)
	}
	vals := r.Header.Values(name)
	for i, v := range vals {
		vals[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(vals, ",")
}

// canonicalPath is the URI-encoded path. Non-S3 services encode each
// segment; the STS and Secrets Manager paths are always "/".
func canonicalPath(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	return p
}

func canonicalQuery(q url.Values) string {
	type kv struct{ k, v string }
	var pairs []kv
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, kv{uriEncode(k), uriEncode(v)})
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p.k + "=" + p.v
	}
	return strings.Join(parts, "&")
}

// uriEncode is SigV4's encoding: unreserved characters stay, everything
// else becomes %XX with upper-case hex (so a space is %20, never +).
func uriEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
