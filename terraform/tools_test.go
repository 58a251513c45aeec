package terraform_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// toolBin finds a pinned tool: $<ENV>, else where .ci/install-tools.sh
// puts it. Without it the test is skipped, except in CI, where `make test`
// installs the tools first.
func toolBin(t *testing.T, env, name, version string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	dir := os.Getenv("KSE_TOOLS_DIR")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(cache, "kubecost-s3-exporter", "tools")
	}
	p := filepath.Join(dir, name+"@"+version, name)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	msg := name + " " + version + " not found: set " + env + " or run .ci/install-tools.sh " + name
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func run(t *testing.T, dir, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("%s %v: %v\n%s", filepath.Base(bin), args, err, out)
	}
}

// TestTerraformFmt runs `terraform fmt -check -recursive` with the pinned
// Terraform.
func TestTerraformFmt(t *testing.T) {
	bin := toolBin(t, "TERRAFORM_BIN", "terraform", "v1.5.7")
	run(t, ".", bin, "fmt", "-check", "-recursive", "-diff", ".")
}

// TestTFLint runs the pinned tflint over every module and example with
// terraform/.tflint.hcl (bundled terraform ruleset only: no plugin download).
func TestTFLint(t *testing.T) {
	bin := toolBin(t, "TFLINT_BIN", "tflint", "v0.64.0")
	cfg, err := filepath.Abs(".tflint.hcl")
	if err != nil {
		t.Fatal(err)
	}
	run(t, ".", bin, "--recursive", "--config", cfg)
}
