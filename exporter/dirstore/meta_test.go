//go:build linux || darwin

package dirstore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// TestMetadataInXattr: the metadata is one JSON extended attribute of the
// file itself (no sidecar file in the tree), and a file put there by hand
// has none.
func TestMetadataInXattr(t *testing.T) {
	root := t.TempDir()
	s, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const key = "a/b/2026-01-01_prod.snappy.parquet"
	if err := s.Put(t.Context(), key, strings.NewReader("data"), map[string]string{"Config-Fingerprint": "abc"}, exporter.Precondition{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, filepath.FromSlash(key))
	buf := make([]byte, 1024)
	n, err := unix.Getxattr(path, metaXattr, buf)
	if err != nil {
		t.Skipf("the test directory's filesystem keeps no user xattrs: %v", err)
	}
	var got map[string]string
	if err := json.Unmarshal(buf[:n], &got); err != nil || got["config-fingerprint"] != "abc" || len(got) != 1 {
		t.Fatalf("attribute %s = %q (%v)", metaXattr, buf[:n], err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil || len(entries) != 1 {
		t.Fatalf("directory holds %v (%v), want only the object", entries, err)
	}

	const byHand = "a/b/2026-01-02_prod.snappy.parquet"
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(byHand)), []byte("copied"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := s.Head(t.Context(), byHand)
	if err != nil || a.Metadata == nil || len(a.Metadata) != 0 || a.Size != 6 || a.ETag == "" {
		t.Fatalf("Head of a hand-made file = %+v, %v; want size 6, an ETag, empty metadata", a, err)
	}
}
