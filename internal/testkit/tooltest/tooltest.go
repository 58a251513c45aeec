// Package tooltest finds, for tests, the pinned command-line tools (minio,
// helm, tflint, terraform) that .ci/install-tools.sh builds and caches.
package tooltest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
)

// TB is the part of testing.TB that the test kit uses. Taking it instead of
// testing.TB keeps the testing package (and its flags) out of the
// non-test binaries that share these helpers, such as kse-bench;
// *testing.T and *testing.B satisfy it.
type TB interface {
	Helper()
	Context() context.Context
	TempDir() string
	Cleanup(func())
	Failed() bool
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// CacheDir mirrors the cache path chosen by .ci/install-tools.sh, or "".
func CacheDir(getenv func(string) string) string {
	if d := getenv("KSE_TOOLS_DIR"); d != "" {
		return d
	}
	base := getenv("XDG_CACHE_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "kubecost-s3-exporter", "tools")
}

// Find locates tool name: $env (which must be executable when set), then
// the newest <name>@<version> in the cache, then $PATH. getenv is injected
// so the lookup order can be tested without touching the environment.
func Find(getenv func(string) string, name, env string) (string, error) {
	if p := getenv(env); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s=%s is not an executable file", env, p)
	}
	if dir := CacheDir(getenv); dir != "" {
		// Versions sort lexically by age: v1.5.7 < v1.9.8 is not true in
		// general, but the cache holds only the pinned version, and minio's
		// pseudo-versions embed a timestamp, so the maximum is the one wanted.
		matches, _ := filepath.Glob(filepath.Join(dir, name+"@*", name))
		sort.Strings(matches)
		for i := len(matches) - 1; i >= 0; i-- {
			if isExecutable(matches[i]) {
				return matches[i], nil
			}
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", errors.New(name + " not found in $" + env + ", the tools cache or $PATH")
}

// Require is Find for tests. Without the tool the test is skipped, except
// in CI (CI set), where `make test` installs the tools first and a missing
// one is a failure: CI must never pass by skipping.
func Require(t TB, name, env string) string {
	t.Helper()
	p, err := Find(os.Getenv, name, env)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (run .ci/install-tools.sh %s)", err, name)
		}
		t.Skipf("%v; run .ci/install-tools.sh %s", err, name)
	}
	return p
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
