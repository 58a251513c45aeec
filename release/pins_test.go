package release_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// lockEntry is one line of .github/actions-lock.txt.
type lockEntry struct{ tag, commit, runs string }

func readLock(t *testing.T, path string) map[string]lockEntry {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lock := map[string]lockEntry{}
	for n, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 4 || !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(f[2]) {
			t.Fatalf("%s line %d: %q is not \"action tag commit runs\"", path, n+1, line)
		}
		lock[f[0]] = lockEntry{f[1], f[2], f[3]}
	}
	return lock
}

// TestActionPinsMatchTheLock: every action a workflow uses is pinned to the
// commit the lock table records for the tag its comment names, every
// locked action runs on node24 (the runtime GitHub's runners require after
// the node20 removal, actions/runner#3948), and the table lists nothing
// unused. The table's commits are checked against GitHub by
// .github/check-action-pins.sh in the ci workflow.
func TestActionPinsMatchTheLock(t *testing.T) {
	lock := readLock(t, "../.github/actions-lock.txt")
	used := map[string]bool{}
	for _, f := range workflows(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(data), "\n") {
			m := usesLine.FindStringSubmatch(line)
			if m == nil || strings.HasPrefix(m[1], "./") {
				continue
			}
			action, sha, _ := strings.Cut(m[1], "@")
			tag := strings.TrimSpace(strings.TrimPrefix(m[2], "#"))
			e, ok := lock[action]
			switch {
			case !ok:
				t.Errorf("%s:%d: %s is not in .github/actions-lock.txt", filepath.Base(f), n+1, action)
			case sha != e.commit || tag != e.tag:
				t.Errorf("%s:%d: %s@%s # %s; the lock pins %s at %s", filepath.Base(f), n+1, action, sha, tag, e.tag, e.commit)
			}
			used[action] = true
		}
	}
	for action, e := range lock {
		if e.runs != "node24" {
			t.Errorf("%s %s runs %s, not node24", action, e.tag, e.runs)
		}
		if !used[action] {
			t.Errorf("%s is locked but no workflow uses it", action)
		}
	}
}

// TestCheckActionPinsScript runs .github/check-action-pins.sh against local
// repositories standing in for GitHub: a lock that matches passes; a tag
// moved to another commit, and a commit whose action.yml runs node20, fail
// naming the action.
func TestCheckActionPinsScript(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	good := fakeAction(t, base, "o/good", "node24", "v1.0.0", false)
	old := fakeAction(t, base, "o/old", "node20", "v2.0.0", true)
	moved := fakeAction(t, base, "o/moved", "node24", "v3.0.0", false)
	lock := filepath.Join(t.TempDir(), "lock")
	write := func(lines string) {
		if err := os.WriteFile(lock, []byte("# action tag commit runs\n"+lines), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := func(wantErr bool) string {
		cmd := exec.Command("bash", "../.github/check-action-pins.sh", lock)
		cmd.Env = append(os.Environ(), "ACTIONS_GIT_BASE=file://"+base)
		out, err := cmd.CombinedOutput()
		if (err != nil) != wantErr {
			t.Fatalf("check-action-pins.sh: %v (want error %v)\n%s", err, wantErr, out)
		}
		return string(out)
	}
	write("o/good v1.0.0 " + good + " node24\n")
	if out := script(false); !strings.Contains(out, "ok   o/good v1.0.0 = "+good+" (node24)") {
		t.Errorf("output:\n%s", out)
	}
	write("o/good v1.0.0 " + good + " node24\no/old v2.0.0 " + old + " node24\no/moved v3.0.0 " + strings.Repeat("a", 40) + " node24\n")
	out := script(true)
	for _, want := range []string{"FAIL o/old v2.0.0: action.yml at " + old + " runs node20", "FAIL o/moved v3.0.0: the tag names " + moved} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

// fakeAction makes a repository base/name with one commit whose action.yml
// runs on runtime, tagged tag (annotated or not), and returns the commit.
func fakeAction(t *testing.T, base, name, runtime, tag string, annotated bool) string {
	dir := filepath.Join(base, name)
	yml := "name: x\nruns:\n  using: '" + runtime + "'\n  main: dist/index.js\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "action.yml"), []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	tagArgs := []string{"tag", tag}
	if annotated {
		tagArgs = []string{"tag", "-a", "-m", tag, tag}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "x"}, tagArgs,
		{"config", "uploadpack.allowFilter", "true"}, {"config", "uploadpack.allowAnySHA1InWant", "true"}} {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestDependabotCoversThePins: Dependabot watches every pin the build
// reads: the actions, the base image's pin file (whose FROM line is the
// Makefile's RELEASE_BASE) and every Go module, the tool recipes under
// .ci/ included.
func TestDependabotCoversThePins(t *testing.T) {
	data, err := os.ReadFile("../.github/dependabot.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Updates []struct {
			Ecosystem   string   `json:"package-ecosystem"`
			Directory   string   `json:"directory"`
			Directories []string `json:"directories"`
		}
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	watched := map[string]bool{}
	for _, u := range cfg.Updates {
		for _, d := range append(u.Directories, u.Directory) {
			if d != "" {
				watched[u.Ecosystem+" "+d] = true
			}
		}
	}
	want := []string{"github-actions /", "docker /release/base", "gomod /"}
	mods, err := filepath.Glob("../.ci/*/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../.ci/*/*/go.mod")
	for _, m := range append(mods, more...) {
		want = append(want, "gomod "+strings.TrimPrefix(filepath.Dir(m), ".."))
	}
	if len(want) < 6 {
		t.Fatalf("found %d tool recipe modules under .ci", len(want)-3)
	}
	for _, w := range want {
		if !watched[w] {
			t.Errorf("dependabot.yml does not watch %s", w)
		}
	}
	base, err := os.ReadFile("../release/base/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	from := regexp.MustCompile(`(?m)^FROM (\S+@sha256:[0-9a-f]{64})$`).FindSubmatch(base)
	if from == nil {
		t.Fatal("release/base/Dockerfile has no FROM line pinned by digest")
	}
	out, err := exec.Command("make", "-s", "-C", "..", "-n", "image", "IMAGE_BASE=release", "VERSION=v0.0.0").Output()
	if err != nil || !strings.Contains(string(out), "-base "+string(from[1])+" ") {
		t.Errorf("make image IMAGE_BASE=release does not build on %s: %v\n%s", from[1], err, out)
	}
}
