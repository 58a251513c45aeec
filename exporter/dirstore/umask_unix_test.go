//go:build unix

package dirstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestPermissionsFollowUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)

	root := filepath.Join(t.TempDir(), "out")
	s, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "a/b/c.parquet", "x")
	for p, want := range map[string]fs.FileMode{
		root:                                 0o750,
		filepath.Join(root, "a"):             0o750,
		filepath.Join(root, "a", "b"):        0o750,
		filepath.Join(root, "a/b/c.parquet"): 0o640,
	} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v (0755/0644 under umask 027)", p, got, want)
		}
	}

	syscall.Umask(0o022)
	put(t, s, "a/d.parquet", "x")
	if fi, _ := os.Stat(filepath.Join(root, "a/d.parquet")); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v under umask 022, want 0644", fi.Mode().Perm())
	}
}
