package terraform_test

import (
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// toolBin finds a pinned tool: $<ENV>, else where .ci/install-tools.sh
// puts it. Without it the test is skipped, except in CI, where `make test`
// installs the tools first.
func toolBin(t *testing.T, env, name string) string {
	t.Helper()
	return tooltest.Require(t, name, env)
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
	bin := toolBin(t, "TERRAFORM_BIN", "terraform")
	run(t, ".", bin, "fmt", "-check", "-recursive", "-diff", ".")
}

// TestTFLint runs the pinned tflint over every module and example with
// terraform/.tflint.hcl (bundled terraform ruleset only: no plugin download).
func TestTFLint(t *testing.T) {
	bin := toolBin(t, "TFLINT_BIN", "tflint")
	cfg, err := filepath.Abs(".tflint.hcl")
	if err != nil {
		t.Fatal(err)
	}
	run(t, ".", bin, "--recursive", "--config", cfg)
}
