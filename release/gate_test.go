package release_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestTagMustBeOnMain runs release.yml's gate step for real, in a
// repository where main has one commit and a branch another: a tag of
// main's commit (lightweight or annotated) passes, a tag of the branch's
// fails, naming the tag; and the gate comes before anything else of the
// test job, whose checkout fetches every branch.
func TestTagMustBeOnMain(t *testing.T) {
	steps := jobSteps(t, workflowPath("release.yml"), "test")
	gate := -1
	for i, s := range steps {
		if strings.Contains(s.Run, "merge-base --is-ancestor") {
			gate = i
		}
	}
	if gate < 0 {
		t.Fatal("release.yml's test job has no step refusing a tag whose commit is not on main")
	}
	if gate < 1 || !strings.HasPrefix(steps[gate-1].Uses, "actions/checkout@") || steps[gate-1].With["fetch-depth"] != "0" || gate > 2 {
		t.Errorf("the gate must follow a checkout with fetch-depth 0 (every branch), after the tag check alone: gate at step %d of %+v", gate+1, steps)
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "on main")
	git("update-ref", "refs/remotes/origin/main", "HEAD")
	git("tag", "v1.0.0")
	git("tag", "-a", "-m", "annotated", "v1.0.1")
	git("checkout", "-q", "-b", "elsewhere")
	git("commit", "-q", "--allow-empty", "-m", "not on main")
	git("tag", "v1.0.2")
	git("tag", "-a", "-m", "annotated", "v1.0.3")
	for tag, ok := range map[string]bool{"v1.0.0": true, "v1.0.1": true, "v1.0.2": false, "v1.0.3": false} {
		cmd, err := stepCommand(steps[gate], repo)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(os.Environ(), "GITHUB_REF=refs/tags/"+tag, "GITHUB_REF_NAME="+tag, "GITHUB_SHA="+git("rev-parse", tag), "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		switch {
		case ok && err != nil:
			t.Errorf("%s (on main) refused: %v\n%s", tag, err, out)
		case !ok && err == nil:
			t.Errorf("%s (not on main) passed", tag)
		case !ok && !strings.Contains(string(out), tag+" is commit") || !ok && !strings.Contains(string(out), "not on main"):
			t.Errorf("%s refused without saying why:\n%s", tag, out)
		}
	}
}
