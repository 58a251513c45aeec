package release_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAptWaitsForTheLock runs .ci/install-tools.sh chromium with a stand-in
// apt-get that records its arguments: both apt-get calls wait for the dpkg
// lock (DPkg::Lock::Timeout) instead of failing when another apt-get holds
// it, and the log says so.
func TestAptWaitsForTheLock(t *testing.T) {
	dir := t.TempDir()
	binDir := filepath.Join(dir, "usr-bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	calls := filepath.Join(dir, "calls")
	fake := filepath.Join(dir, "apt-get")
	script := "#!/usr/bin/env bash\necho \"$*\" >>" + calls + "\n" +
		"if [[ \" $* \" == *\" install \"* ]]; then printf '#!/bin/sh\\n' >" + filepath.Join(binDir, "chromium") + "; chmod +x " + filepath.Join(binDir, "chromium") + "; fi\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "../.ci/install-tools.sh", "chromium")
	cmd.Env = append(os.Environ(), "KSE_APT_GET="+fake, "KSE_APT_BIN_DIR="+binDir, "KSE_TOOLS_DIR="+filepath.Join(dir, "tools"), "KSE_APT_LOCK_TIMEOUT=321")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("install-tools.sh chromium: %v\n%s", err, stderr.String())
	}
	if got := strings.TrimSpace(stdout.String()); got != "CHROMIUM_BIN="+filepath.Join(binDir, "chromium") {
		t.Errorf("stdout %q", got)
	}
	data, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "update") || !strings.Contains(lines[1], "install -y -qq chromium") {
		t.Fatalf("apt-get calls %q, want update then install", lines)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "-o DPkg::Lock::Timeout=321 ") {
			t.Errorf("apt-get %s: does not wait for the dpkg lock", l)
		}
	}
	if !strings.Contains(stderr.String(), "waits up to 321s for the dpkg lock") {
		t.Errorf("the log does not say it waits for the lock:\n%s", stderr.String())
	}
}
