package dirstore

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/storetest"
)

func TestAcceptance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) exporter.ObjectStore {
		s, err := New(t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, storetest.WithLeftovers(func(t *testing.T, s exporter.ObjectStore) []string {
		return tempFiles(t, s.(*Store).root)
	}))
}

// tempFiles returns every temp file under root: what a failed Put must not leave.
func tempFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (IsTemp(d.Name()) || strings.Contains(d.Name(), ".tmp-")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestListSkipsTempsSymlinksAndDirs(t *testing.T) {
	root := t.TempDir()
	s, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "k/real.parquet", "x")
	// What a crash mid-Put leaves behind.
	if err := os.WriteFile(filepath.Join(root, "k", ".real.parquet.tmp-0123456789abcdef"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "k", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "k", "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := s.List(t.Context(), "", "", func(o exporter.ObjectInfo) error {
		keys = append(keys, o.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != "k/real.parquet" {
		t.Fatalf("List = %q, want only k/real.parquet", keys)
	}
}

func TestKeysCannotEscapeRoot(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	s, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", ".", "../x", "a/../../x", "/etc/x", "a//b", "a/./b", "a/", `a\b`, "a/.b.tmp-0123456789abcdef"} {
		if err := s.Put(t.Context(), key, strings.NewReader("x"), nil, exporter.Precondition{}); err == nil {
			t.Errorf("Put(%q) succeeded, want an invalid-key error", key)
		}
		if _, err := s.Open(t.Context(), key); err == nil || errors.Is(err, exporter.ErrNotExist) {
			t.Errorf("Open(%q) = %v, want an invalid-key error", key, err)
		}
	}
	// A symlink planted in the tree must not lead out of it either.
	if err := os.Symlink(parent, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(t.Context(), "out/escaped", strings.NewReader("x"), nil, exporter.Precondition{}); err == nil {
		t.Error("Put through a symlink pointing outside the root succeeded")
	}
	if _, err := os.Stat(filepath.Join(parent, "escaped")); err == nil {
		t.Error("a file was written outside the root")
	}
}

func TestPutReaderErrorRemovesTemp(t *testing.T) {
	root := t.TempDir()
	s, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("some bytes"), errReader{boom})
	if err := s.Put(t.Context(), "a/b.parquet", r, nil, exporter.Precondition{}); !errors.Is(err, boom) {
		t.Fatalf("Put = %v, want boom", err)
	}
	entries, err := os.ReadDir(filepath.Join(root, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("directory holds %v after a failed Put", entries)
	}
}

func TestNewNeedsRoot(t *testing.T) {
	if _, err := New("", Options{}); err == nil || !strings.Contains(err.Error(), "root") {
		t.Fatalf("New(\"\") = %v, want a root error", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func put(t *testing.T, s *Store, key, content string) {
	t.Helper()
	if err := s.Put(t.Context(), key, strings.NewReader(content), nil, exporter.Precondition{}); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}
