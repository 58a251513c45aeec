package s3rec

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Exercise lists, puts a small object create-only and replace-only,
// and a two-part object create-only.
func Exercise(t testing.TB, store exporter.ObjectStore) {
	t.Helper()
	ctx := context.Background()
	var keys []string
	if err := store.List(ctx, "costs/", "", func(o exporter.ObjectInfo) error { keys = append(keys, o.Key); return nil }); err != nil {
		t.Fatalf("list: %v", err)
	}
	if !slices.Equal(keys, []string{Listed}) {
		t.Errorf("listed %v", keys)
	}
	if err := store.Put(ctx, "costs/small.parquet", strings.NewReader("hello"), nil, exporter.CreateOnly); err != nil {
		t.Fatalf("put create-only: %v", err)
	}
	if err := store.Put(ctx, "costs/small.parquet", strings.NewReader("hello"), nil,
		exporter.Precondition{IfMatch: ETag}); err != nil {
		t.Fatalf("put replace-only: %v", err)
	}
	big := bytes.Repeat([]byte{'x'}, 5<<20+1) // two parts of 5 MiB
	if err := store.Put(ctx, "costs/big.parquet", bytes.NewReader(big), nil, exporter.CreateOnly); err != nil {
		t.Fatalf("put multipart: %v", err)
	}
}

// Check holds every request to the host, region and signing name
// AWS documents, and each call to its path and conditional headers.
func Check(t testing.TB, reqs []Request, host, region string) {
	t.Helper()
	var ops []string
	for _, r := range reqs {
		ops = append(ops, r.Op)
		if r.Host != host || r.Region != region || r.Service != "s3" || !r.HostSigned {
			t.Errorf("%s: host %q, signed for %s/%s (host signed %v); want %q, %s/s3", r.Op, r.Host, r.Region, r.Service, r.HostSigned, host, region)
		}
		wantPath := map[string]string{"ListObjectsV2": "/", "PutObject": "/costs/small.parquet"}[r.Op]
		if strings.Contains(r.Op, "Multipart") || r.Op == "UploadPart" {
			wantPath = "/costs/big.parquet"
		}
		if r.Path != wantPath {
			t.Errorf("%s: path %q, want %q (the access point is named in the host only)", r.Op, r.Path, wantPath)
		}
	}
	want := []string{"ListObjectsV2", "PutObject", "PutObject", "CreateMultipartUpload", "UploadPart", "UploadPart", "CompleteMultipartUpload"}
	if !slices.Equal(ops, want) {
		t.Fatalf("calls %v, want %v", ops, want)
	}
	if p := reqs[0].Query.Get("prefix"); p != "costs/" {
		t.Errorf("ListObjectsV2 prefix %q", p)
	}
	for i, want := range map[int][2]string{
		1: {"*", ""}, 2: {"", ETag}, 6: {"*", ""},
	} {
		if h := reqs[i].Header; h.Get("If-None-Match") != want[0] || h.Get("If-Match") != want[1] {
			t.Errorf("%s #%d: If-None-Match %q If-Match %q, want %q %q", reqs[i].Op, i, h.Get("If-None-Match"), h.Get("If-Match"), want[0], want[1])
		}
	}
	for _, i := range []int{3, 4, 5} {
		if h := reqs[i].Header; h.Get("If-None-Match") != "" || h.Get("If-Match") != "" {
			t.Errorf("%s carries a precondition; only PutObject and CompleteMultipartUpload take one", reqs[i].Op)
		}
	}
}
