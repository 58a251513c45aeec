package release_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"

	"sigs.k8s.io/yaml"
)

// TestActionlint lints every workflow with the pinned actionlint. The
// shellcheck and pyflakes integrations are off, so the result does not
// depend on what else the machine has installed.
func TestActionlint(t *testing.T) {
	bin := tooltest.Require(t, "actionlint", "ACTIONLINT_BIN")
	files := workflows(t)
	run(t, nil, false, bin, append([]string{"-shellcheck=", "-pyflakes=", "-no-color"}, files...)...)
}

// TestActionlintCatchesErrors: the lint step fails on a broken workflow,
// so a passing run means something.
func TestActionlintCatchesErrors(t *testing.T) {
	bin := tooltest.Require(t, "actionlint", "ACTIONLINT_BIN")
	bad := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(bad, []byte("on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ github.nope }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, nil, true, bin, "-shellcheck=", "-pyflakes=", "-no-color", bad)
	if !strings.Contains(out, "nope") {
		t.Errorf("actionlint failed without naming the bad property:\n%s", out)
	}
}

// TestWorkflowMakeTargetsExist: every `make <target>` a workflow runs is a
// target of the Makefile, and the two workflows run what they must.
func TestWorkflowMakeTargetsExist(t *testing.T) {
	targets := makeTargets(t)
	used := map[string][]string{}
	for _, f := range workflows(t) {
		for _, run := range runSteps(t, f) {
			for _, tgt := range makeInvocations(run) {
				used[filepath.Base(f)] = append(used[filepath.Base(f)], tgt)
				if !targets[tgt] {
					t.Errorf("%s runs `make %s`; the Makefile has no target %s", filepath.Base(f), tgt, tgt)
				}
			}
		}
	}
	for wf, want := range map[string][]string{
		"ci.yml":      {"test"},
		"build.yml":   {"release-build", "release-names", "release-plan"},
		"release.yml": {"test", "release-build", "release-check", "release-github-state", "release-plan", "image-push", "chart-push", "sign", "release-publish"},
	} {
		for _, tgt := range want {
			if !slices.Contains(used[wf], tgt) {
				t.Errorf("%s does not run `make %s` (it runs %v)", wf, tgt, used[wf])
			}
		}
	}
}

func TestMakeInvocations(t *testing.T) {
	for in, want := range map[string][]string{
		"make test":                                             {"test"},
		"make image-push VERSION=v1 && x":                       {"image-push"},
		"cd x; make -C . sign release-assets":                   {"sign", "release-assets"},
		"echo make-believe":                                     nil,
		"make release-check\nif [ x ]; then\n":                  {"release-check"},
		`make -s release-plan SCOPE=publish >>"$GITHUB_OUTPUT"`: {"release-plan"},
	} {
		if got := makeInvocations(in); !slices.Equal(got, want) {
			t.Errorf("makeInvocations(%q) = %q, want %q", in, got, want)
		}
	}
}

func workflows(t *testing.T) []string {
	files, err := filepath.Glob(workflowPath("*.y*ml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("workflows: %v %v", files, err)
	}
	return files
}

// runSteps returns the `run:` scripts of every step of a workflow.
func runSteps(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct{ Run string }
		}
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			if s.Run != "" {
				out = append(out, s.Run)
			}
		}
	}
	return out
}

var makeCall = regexp.MustCompile(`(?m)(?:^|[;&|\s])make((?:[ \t]+[^\s;&|]+)*)`)

// makeInvocations returns the targets of every make command in a script:
// the words after `make` that are neither flags, their values, nor
// variable assignments.
func makeInvocations(script string) []string {
	var out []string
	for _, m := range makeCall.FindAllStringSubmatch(script, -1) {
		words := strings.Fields(m[1])
		// A redirection ends the command's words: `make -s x >>"$GITHUB_OUTPUT"`.
		if i := slices.IndexFunc(words, func(w string) bool { return strings.ContainsAny(w[:1], "<>") || strings.HasPrefix(w, "2>") }); i >= 0 {
			words = words[:i]
		}
		for i := 0; i < len(words); i++ {
			w := words[i]
			switch {
			case w == "-C" || w == "-f" || w == "-j":
				i++
			case strings.HasPrefix(w, "-") || strings.Contains(w, "="):
			default:
				out = append(out, w)
			}
		}
	}
	return out
}

// makeTargets reads the explicit targets of the Makefile.
func makeTargets(t *testing.T) map[string]bool {
	data, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Za-z0-9][A-Za-z0-9_.-]*(?:\s+[A-Za-z0-9][A-Za-z0-9_.-]*)*)\s*:([^=]|$)`).FindAllStringSubmatch(string(data), -1) {
		for _, tgt := range strings.Fields(m[1]) {
			targets[tgt] = true
		}
	}
	if !targets["test"] || !targets["image"] {
		t.Fatalf("read no test or image target from the Makefile: %v", targets)
	}
	return targets
}

// workflowPath is a workflow of the repository, or of the copy
// KSE_WORKFLOWS_DIR names: TestReleaseMutations runs the workflow tests
// on copies with one check taken out.
func workflowPath(name string) string {
	dir := os.Getenv("KSE_WORKFLOWS_DIR")
	if dir == "" {
		dir = "../.github/workflows"
	}
	return filepath.Join(dir, name)
}
