// Package s3rec is an S3 endpoint on 127.0.0.1 that records every request
// and answers the calls the exporter's store makes (ListObjectsV2,
// PutObject, the multipart calls), for tests that check where requests go:
// the host the client addressed, the path, the headers and the SigV4
// credential scope. The client reaches it either through Client, an
// aws.HTTPClient that dials the recorder whatever the host, or through
// Proxy, an HTTPS proxy that terminates TLS for any host with a
// certificate from its own CA, so that an unmodified SDK client (proxy
// from HTTPS_PROXY, CA from AWS_CA_BUNDLE) sends it what it would send AWS.
package s3rec

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Request is one request as it reached the recorder.
type Request struct {
	Op     string // ListObjectsV2, PutObject, UploadPart, CreateMultipartUpload, CompleteMultipartUpload, or "?"
	Host   string // the Host header: the host the client addressed
	Path   string // escaped
	Query  url.Values
	Header http.Header
	// Region and Service are the SigV4 credential scope; HostSigned says
	// whether the host is among the signed headers.
	Region, Service string
	HostSigned      bool
}

// Recorder records requests and answers them as S3 would.
type Recorder struct {
	mu   sync.Mutex
	reqs []Request
}

// Take returns the requests recorded since the last Take.
func (r *Recorder) Take() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

// ETag is the ETag of every object the recorder stores.
const ETag = `"5d41402abc4b2a76b9719d911017c592"`

// Listed is the one key every listing returns.
const Listed = "costs/day.parquet"

func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	q := req.URL.Query()
	rec := Request{Op: op(req.Method, q), Host: req.Host, Path: req.URL.EscapedPath(), Query: q, Header: req.Header.Clone()}
	// AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/<service>/aws4_request, SignedHeaders=<a;b>, Signature=<hex>
	for _, f := range strings.Split(strings.TrimPrefix(req.Header.Get("Authorization"), "AWS4-HMAC-SHA256 "), ", ") {
		if v, ok := strings.CutPrefix(f, "Credential="); ok {
			if scope := strings.Split(v, "/"); len(scope) == 5 {
				rec.Region, rec.Service = scope[2], scope[3]
			}
		}
		if v, ok := strings.CutPrefix(f, "SignedHeaders="); ok {
			rec.HostSigned = slices.Contains(strings.Split(v, ";"), "host")
		}
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, rec)
	r.mu.Unlock()
	const ns = `xmlns="http://s3.amazonaws.com/doc/2006-03-01/"`
	w.Header().Set("ETag", ETag)
	switch rec.Op {
	case "ListObjectsV2":
		fmt.Fprintf(w, `<ListBucketResult %s><KeyCount>1</KeyCount><IsTruncated>false</IsTruncated>`+
			`<Contents><Key>%s</Key><Size>5</Size><ETag>"e"</ETag></Contents></ListBucketResult>`, ns, Listed)
	case "CreateMultipartUpload":
		fmt.Fprintf(w, `<InitiateMultipartUploadResult %s><UploadId>up-1</UploadId></InitiateMultipartUploadResult>`, ns)
	case "CompleteMultipartUpload":
		fmt.Fprintf(w, `<CompleteMultipartUploadResult %s><ETag>"c-2"</ETag></CompleteMultipartUploadResult>`, ns)
	case "PutObject", "UploadPart":
	default:
		http.Error(w, "unexpected "+req.Method+" "+req.URL.String(), http.StatusNotImplemented)
	}
}

func op(method string, q url.Values) string {
	switch {
	case method == http.MethodGet && q.Get("list-type") == "2":
		return "ListObjectsV2"
	case method == http.MethodPut && q.Has("partNumber"):
		return "UploadPart"
	case method == http.MethodPut:
		return "PutObject"
	case method == http.MethodPost && q.Has("uploads"):
		return "CreateMultipartUpload"
	case method == http.MethodPost && q.Has("uploadId"):
		return "CompleteMultipartUpload"
	}
	return "?"
}

// Client is an aws.HTTPClient sending every request to a plain-HTTP
// recorder on 127.0.0.1, with the host it was addressed to as its Host
// header. Close stops the recorder.
type Client struct {
	srv *httptest.Server
}

// NewClient starts a recorder reached through the returned client.
func (r *Recorder) NewClient() *Client {
	return &Client{srv: httptest.NewServer(r)}
}

// Do sends req to the recorder over TCP, unchanged but for where it is
// dialled.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Host = cmp.Or(req.Host, req.URL.Host)
	out.URL.Scheme, out.URL.Host = "http", strings.TrimPrefix(c.srv.URL, "http://")
	return c.srv.Client().Transport.RoundTrip(out)
}

// Close stops the recorder.
func (c *Client) Close() { c.srv.Close() }
