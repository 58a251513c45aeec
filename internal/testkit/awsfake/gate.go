package awsfake

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// S3Gate is a reverse proxy in front of an S3 server (MinIO) that enforces
// the expiry the fake STS announced, answering ExpiredToken as S3 does.
// MinIO cannot issue credentials shorter than 15 minutes; with the gate, a
// test can cross a credential expiry in seconds and prove the exporter
// refreshed in time instead of sending stale credentials.
type S3Gate struct {
	URL string

	fake *Fake
	mu   sync.Mutex
	seen []string // access key IDs of forwarded requests, in order
	// rejected counts requests refused for expired credentials.
	rejected int
}

// S3Gate starts a gate forwarding to upstream and closes it in t.Cleanup.
func (f *Fake) S3Gate(t testing.TB, upstream string) *S3Gate {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatalf("awsfake: gate upstream: %v", err)
	}
	g := &S3Gate{fake: f}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		// The client signed the gate's host; MinIO must see the same
		// Host header or every signature check fails.
		pr.Out.Host = pr.In.Host
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := s3AccessKey(r)
		if key != "" && f.Expired(key) {
			g.mu.Lock()
			g.rejected++
			g.mu.Unlock()
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
				`<Error><Code>ExpiredToken</Code><Message>The provided token has expired.</Message><RequestId>%s</RequestId></Error>`, requestID())
			return
		}
		g.mu.Lock()
		g.seen = append(g.seen, key)
		g.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

// Signers returns the access key ID of every forwarded request.
func (g *S3Gate) Signers() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.seen...)
}

// Rejected is how many requests carried expired credentials.
func (g *S3Gate) Rejected() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rejected
}

// s3AccessKey extracts the signing access key from a header-signed or
// presigned request.
func s3AccessKey(r *http.Request) string {
	if s, err := parseSigV4(r.Header.Get("Authorization")); err == nil {
		return s.AccessKeyID
	}
	if cred := r.URL.Query().Get("X-Amz-Credential"); cred != "" {
		return strings.SplitN(cred, "/", 2)[0]
	}
	return ""
}
