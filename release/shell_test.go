package release_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// shellCommand is the command GitHub's runner starts for a run: step on
// Linux, with {0} the file holding the script. GitHub documents it in
// "Workflow syntax for GitHub Actions", jobs.<job_id>.steps[*].shell
// (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#jobsjob_idstepsshell):
//
//	unspecified  bash -e {0}
//	bash         bash --noprofile --norc -eo pipefail {0}
//	sh           sh -e {0}
//
// So a step without shell: has no pipefail: `gh ... | jq` passes when gh
// fails. Any other shell is an error here, so a new one is modelled before
// it ships.
func shellCommand(shell, script string) ([]string, error) {
	switch shell {
	case "":
		return []string{"bash", "-e", script}, nil
	case "bash":
		return []string{"bash", "--noprofile", "--norc", "-eo", "pipefail", script}, nil
	case "sh":
		return []string{"sh", "-e", script}, nil
	}
	return nil, fmt.Errorf("shell %q is not one the step harness models", shell)
}

// stepCommand writes s's script to a file in a temporary directory and
// returns the command GitHub would run it with, in dir.
func stepCommand(s workflowStep, dir string) (*exec.Cmd, error) {
	tmp, err := os.MkdirTemp("", "step-")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(tmp, "step.sh")
	if err := os.WriteFile(script, []byte(s.Run), 0o644); err != nil {
		return nil, err
	}
	argv, err := shellCommand(s.Shell, script)
	if err != nil {
		return nil, fmt.Errorf("step %q: %w", s.Name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	return cmd, nil
}

// TestStepHarnessShells: the harness runs a step with the shell GitHub
// would: without shell: a failing command at the head of a pipe passes
// the step (bash -e), with shell: bash it fails it (pipefail), and a
// job's or the workflow's defaults.run.shell counts as the step's.
func TestStepHarnessShells(t *testing.T) {
	wf := `on: push
defaults:
  run:
    shell: sh
jobs:
  plain:
    steps:
      - run: false | true
  bash:
    steps:
      - run: false | true
        shell: bash
  jobdefault:
    defaults:
      run:
        shell: bash
    steps:
      - run: false | true
  wfdefault:
    steps:
      - run: echo "$0"
`
	for job, wantFail := range map[string]bool{"bash": true, "jobdefault": true} {
		steps, err := parseJobSteps([]byte(wf), job)
		if err != nil {
			t.Fatal(err)
		}
		if err := runStep(t, steps[0]); (err != nil) != wantFail {
			t.Errorf("job %s (shell %q): `false | true` returned %v, want failure %v", job, steps[0].Shell, err, wantFail)
		}
	}
	steps, err := parseJobSteps([]byte(strings.Replace(wf, "defaults:\n  run:\n    shell: sh\n", "", 1)), "plain")
	if err != nil {
		t.Fatal(err)
	}
	if steps[0].Shell != "" || runStep(t, steps[0]) != nil {
		t.Errorf("a step without shell: (GitHub: bash -e {0}) failed on `false | true`, or read shell %q", steps[0].Shell)
	}
	if steps, err := parseJobSteps([]byte(wf), "wfdefault"); err != nil || steps[0].Shell != "sh" {
		t.Errorf("the workflow's defaults.run.shell: %+v, %v", steps, err)
	}
	// The options bash reports are the ones GitHub sets.
	for shell, want := range map[string]string{"": "errexit on|pipefail off", "bash": "errexit on|pipefail on"} {
		cmd, err := stepCommand(workflowStep{Run: "set -o | grep -E '^(errexit|pipefail)' | tr -s ' \\t' ' ' | paste -sd'|'", Shell: shell}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.Output()
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("shell %q: options %q (%v), want %q", shell, got, err, want)
		}
	}
}

func runStep(t *testing.T, s workflowStep) error {
	cmd, err := stepCommand(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return cmd.Run()
}

// pipeline finds a pipe (not ||) outside single quotes: a step whose
// result can hang on one.
var pipeline = regexp.MustCompile(`(^|[^|])\|([^|]|$)`)

func hasPipe(script string) bool {
	unquoted := regexp.MustCompile(`'[^']*'`).ReplaceAllString(script, "''")
	return pipeline.MatchString(unquoted)
}

// TestPipeStepsRunWithPipefail: every run: step of the release's
// workflows whose script has a pipe runs under shell: bash (pipefail), so
// a failure at the head of a pipe fails the step.
func TestPipeStepsRunWithPipefail(t *testing.T) {
	for file, jobs := range map[string][]string{"release.yml": {"test", "publish"}, "build.yml": {"build", "rebuild", "attest"}} {
		for _, job := range jobs {
			for _, s := range jobSteps(t, workflowPath(file), job) {
				if s.Run != "" && hasPipe(s.Run) && s.Shell != "bash" {
					t.Errorf("%s job %s step %q has a pipe and runs as %q, not shell: bash (GitHub runs it without pipefail)", file, job, s.Name, s.Shell)
				}
			}
		}
	}
	for script, want := range map[string]bool{"a | b": true, "a || b": false, "sed 's|x|y|'": false, "x=$(a | b)": true, "a |\n b": true} {
		if hasPipe(script) != want {
			t.Errorf("hasPipe(%q) = %v", script, !want)
		}
	}
}
