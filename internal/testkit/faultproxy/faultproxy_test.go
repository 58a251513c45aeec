package faultproxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct{ method, target, op, key string }{
		{"GET", "/b?list-type=2&prefix=x", ListObjectsV2, ""},
		{"GET", "/b?uploads&prefix=x", ListMultipartUploads, ""},
		{"PUT", "/b/a/k.parquet?x-id=PutObject", PutObject, "a/k.parquet"},
		{"POST", "/b/a/k?uploads", CreateMultipartUpload, "a/k"},
		{"PUT", "/b/a/k?partNumber=2&uploadId=u&x-id=UploadPart", UploadPart, "a/k"},
		{"POST", "/b/a/k?uploadId=u", CompleteMultipartUpload, "a/k"},
		{"DELETE", "/b/a/k?uploadId=u&x-id=AbortMultipartUpload", AbortMultipartUpload, "a/k"},
		{"DELETE", "/b/a/k?x-id=DeleteObject", DeleteObject, "a/k"},
		{"GET", "/b/a/k?x-id=GetObject", GetObject, "a/k"},
		{"GET", "/model/allocation?window=1d", GetObject, "allocation"},
	} {
		r := httptest.NewRequest(tc.method, tc.target, nil)
		if op, key := Classify(r); op != tc.op || key != tc.key {
			t.Errorf("%s %s = %s %q, want %s %q", tc.method, tc.target, op, key, tc.op, tc.key)
		}
	}
}

func TestRules(t *testing.T) {
	var got []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Host+" "+string(b))
		io.WriteString(w, "ok")
	}))
	defer backend.Close()
	p, err := New(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	put := func(ctx context.Context) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "PUT", p.URL+"/b/day.parquet", strings.NewReader(strings.Repeat("x", 1<<20)))
		return http.DefaultClient.Do(req)
	}

	p.SetRules(Rule{Op: PutObject, Action: Status, Status: 503, Code: "SlowDown", Times: 1})
	if resp, err := put(t.Context()); err != nil || resp.StatusCode != 503 {
		t.Fatalf("first Put: %v %v, want 503", resp, err)
	}
	if resp, err := put(t.Context()); err != nil || resp.StatusCode != 200 {
		t.Fatalf("second Put: %v %v, want 200 (Times: 1)", resp, err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], strings.TrimPrefix(p.URL, "http://")+" ") {
		t.Fatalf("backend saw %d requests, Host %q: want one, with the proxy's Host", len(got), got)
	}

	p.SetRules(Rule{Op: PutObject, Action: Cut, After: 1000})
	if _, err := put(t.Context()); err == nil {
		t.Fatal("a cut Put succeeded")
	}

	p.SetRules(Rule{Op: PutObject, Action: Stall})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := put(ctx); err == nil {
		t.Fatal("a stalled Put succeeded")
	}
	if n := p.Count(PutObject, "day", 200); n != 1 {
		t.Fatalf("Count(PutObject, 200) = %d, want 1; log %v", n, p.Log())
	}
	if len(got) != 1 {
		t.Fatalf("faults reached the backend: %d requests", len(got))
	}
}
