package release_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestReleaseDocsClaimOnlyWhatIsEnforced holds docs/release.md (and the
// release workflow's comments) to what the workflows and the code do.
func TestReleaseDocsClaimOnlyWhatIsEnforced(t *testing.T) {
	data, err := os.ReadFile("../docs/release.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	t.Run("every test it names exists", func(t *testing.T) { docTestsExist(t, doc) })
	t.Run("its counts are the Makefile's", func(t *testing.T) { docCounts(t, doc) })
	t.Run("the tag ruleset is one the rulesets API takes", func(t *testing.T) { docRuleset(t, doc) })
	t.Run("the job table is the workflows' jobs, permissions and needs", func(t *testing.T) { docJobs(t, doc) })
	t.Run("the on-main check is not said to stop a tag pusher", func(t *testing.T) {
		wf, err := os.ReadFile(workflowPath("release.yml"))
		if err != nil {
			t.Fatal(err)
		}
		docMainClaims(t, "docs/release.md", strings.Split(doc, "\n\n"))
		docMainClaims(t, "release.yml", commentBlocks(string(wf)))
	})
	t.Run("Rekor inclusion only for a public repository", func(t *testing.T) {
		for _, p := range strings.Split(doc, "\n\n") {
			for _, row := range strings.Split(p, "\n|") { // a table row is its own claim
				if strings.Contains(row, "Rekor") && !strings.Contains(row, "public") {
					t.Errorf("a paragraph claims Rekor inclusion without saying it holds only for a public repository: %q", row)
				}
			}
		}
	})
	t.Run("--signer-workflow always names the tag", func(t *testing.T) {
		for _, m := range regexp.MustCompile("--signer-workflow\\s+\"?([^\\s\"`]+)").FindAllStringSubmatch(doc, -1) {
			if !regexp.MustCompile(`/(\.github/workflows/)?build\.yml@\S+$`).MatchString(m[1]) {
				t.Errorf("--signer-workflow %s: gh 2.97.0 matches it as a prefix; want build.yml@<ref>", m[1])
			}
		}
	})
	t.Run("COMMIT is the tag's commit, lightweight or annotated", func(t *testing.T) { docCommit(t, doc) })
	t.Run("the offline block sets what it uses", func(t *testing.T) {
		block := shBlock(t, doc, "### Offline, from the release assets")
		set := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)(?:^\s*|\bfor\s+)([A-Za-z_][A-Za-z0-9_]*)(?:=|\s+in\b)`).FindAllStringSubmatch(block, -1) {
			set[m[1]] = true
		}
		for _, m := range regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(block, -1) {
			if !set[m[1]] {
				t.Errorf("the offline block uses $%s, which it does not set (the online block's variables are not there offline)", m[1])
			}
		}
		if len(set) < 5 {
			t.Errorf("read only %v assignments from the offline block", set)
		}
	})
}

func docTestsExist(t *testing.T, doc string) {
	defined := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".cache" || d.Name() == "bin" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`).FindAllSubmatch(src, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9]*`).FindAllString(doc, -1)
	if len(named) < 20 {
		t.Fatalf("read only %d test names from the docs", len(named))
	}
	for _, n := range named {
		if !defined[n] {
			t.Errorf("docs/release.md names %s, which no test defines", n)
		}
	}
}

var numberWords = map[string]int{"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

func docCounts(t *testing.T, doc string) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`sha256sum ((?:[^>\n]|\\\n)+)>SHA256SUMS`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile's release-assets writes no SHA256SUMS")
	}
	listed := len(strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " ")))
	for what, want := range map[string]int{"release files": listed + 1, "subjects": listed + 2} {
		re := regexp.MustCompile(`(?i)\b([a-z]+|[0-9]+)\s+` + strings.ReplaceAll(what, " ", `\s+`) + `\b`)
		for _, c := range re.FindAllStringSubmatch(doc, -1) {
			n, ok := numberWords[strings.ToLower(c[1])]
			if v, err := strconv.Atoi(c[1]); err == nil {
				n, ok = v, true
			}
			if ok && n != want {
				t.Errorf("docs/release.md says %q; the Makefile makes %d %s", c[0], want, what)
			}
		}
	}
}

// docRuleset: the JSON is a body of POST /repos/{owner}/{repo}/rulesets
// (https://docs.github.com/en/rest/repos/rules#create-a-repository-ruleset)
// that lets only its bypass actors create, move or delete a v* tag.
func docRuleset(t *testing.T, doc string) {
	_, sec, ok := strings.Cut(doc, "### Who may release: the tag ruleset")
	if !ok {
		t.Fatal("docs/release.md has no \"Who may release: the tag ruleset\" section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	if !strings.Contains(sec, "What stops a tag pusher is a **tag ruleset**") || !strings.Contains(sec, "it does not stop a\ntag pusher") {
		t.Error("the section does not say that the on-main check does not stop a tag pusher and a tag ruleset does")
	}
	_, body, ok := strings.Cut(sec, "```json\n")
	body, _, _ = strings.Cut(body, "```")
	if !ok {
		t.Fatal("the section gives no ruleset JSON")
	}
	var rs struct {
		Name        string `json:"name"`
		Target      string `json:"target"`
		Enforcement string `json:"enforcement"`
		Conditions  struct {
			RefName struct {
				Include []string `json:"include"`
				Exclude []string `json:"exclude"`
			} `json:"ref_name"`
		} `json:"conditions"`
		Rules []struct {
			Type string `json:"type"`
		} `json:"rules"`
		BypassActors []struct {
			ActorID    *int   `json:"actor_id"`
			ActorType  string `json:"actor_type"`
			BypassMode string `json:"bypass_mode"`
		} `json:"bypass_actors"`
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rs); err != nil {
		t.Fatalf("the ruleset JSON: %v", err)
	}
	var types []string
	for _, r := range rs.Rules {
		types = append(types, r.Type)
	}
	if rs.Name == "" || rs.Target != "tag" || rs.Enforcement != "active" || !slices.Equal(rs.Conditions.RefName.Include, []string{"refs/tags/v*"}) {
		t.Errorf("ruleset %+v: want a named, active tag ruleset on refs/tags/v*", rs)
	}
	for _, want := range []string{"creation", "update", "deletion"} {
		if !slices.Contains(types, want) {
			t.Errorf("the ruleset has no %s rule: %v", want, types)
		}
	}
	if len(rs.BypassActors) == 0 {
		t.Error("the ruleset lets nobody create a release tag")
	}
	for _, a := range rs.BypassActors {
		if !slices.Contains([]string{"Integration", "OrganizationAdmin", "RepositoryRole", "Team", "DeployKey"}, a.ActorType) ||
			!slices.Contains([]string{"always", "pull_request"}, a.BypassMode) || (a.ActorID == nil) != (a.ActorType == "DeployKey") {
			t.Errorf("bypass actor %+v is not one the rulesets API takes", a)
		}
	}
}

// docMainClaims: a paragraph that says the on-main check refuses, stops
// or protects must also name the tag ruleset, which is what stops a tag
// pusher; and the old claims are gone.
func docMainClaims(t *testing.T, file string, paras []string) {
	mainCheck := regexp.MustCompile("(?i)(not on .?main|commit of .?main|on .?main.? check|merge-base --is-ancestor)")
	enforces := regexp.MustCompile(`(?i)\b(refuses|rejects|stops|protects|prevents|guards)\b`)
	for _, p := range paras {
		if mainCheck.MatchString(p) && enforces.MatchString(p) && !strings.Contains(p, "ruleset") {
			t.Errorf("%s: a paragraph says the on-main check enforces without naming the tag ruleset:\n%s", file, p)
		}
		for _, claim := range []string{"could otherwise release any commit", "moves the question to who can change"} {
			if strings.Contains(strings.Join(strings.Fields(p), " "), claim) {
				t.Errorf("%s still claims %q", file, claim)
			}
		}
	}
}

// commentBlocks are the runs of comment lines of a YAML file.
func commentBlocks(s string) []string {
	var out []string
	var cur []string
	for _, line := range strings.Split(s, "\n") {
		if c, ok := strings.CutPrefix(strings.TrimSpace(line), "#"); ok {
			cur = append(cur, c)
			continue
		}
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	return out
}

func shBlock(t *testing.T, doc, heading string) string {
	_, sec, ok := strings.Cut(doc, heading)
	_, block, ok2 := strings.Cut(sec, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("no sh block under %q", heading)
	}
	return block
}

// docCommit runs the online block's COMMIT and BUILDER lines against a
// local repository standing for GitHub (git's url.<base>.insteadOf): a
// lightweight and an annotated tag give their commit; a tag that is not
// there stops the BUILDER line rather than leave --source-digest empty.
func docCommit(t *testing.T, doc string) {
	block := shBlock(t, doc, "### Online, with the GitHub API")
	commit := regexp.MustCompile(`(?m)^COMMIT=.*$`).FindString(block)
	builder := regexp.MustCompile(`(?ms)^BUILDER=\(.*?\)$`).FindString(block)
	if commit == "" || builder == "" || !strings.Contains(builder, `--source-digest "${COMMIT:?`) {
		t.Fatalf("the online block's COMMIT line %q or BUILDER %q (with --source-digest \"${COMMIT:?...}\")", commit, builder)
	}
	root := t.TempDir()
	repo := filepath.Join(root, "o", "r")
	gitconfig := filepath.Join(root, "gitconfig")
	if err := os.WriteFile(gitconfig, []byte("[url \"file://"+root+"/\"]\n\tinsteadOf = https://github.com/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL="+gitconfig, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "one")
	git("tag", "v1.0.0")
	git("commit", "-q", "--allow-empty", "-m", "two")
	git("tag", "-a", "-m", "annotated", "v1.0.1")
	git("commit", "-q", "--allow-empty", "-m", "three")
	for tag, want := range map[string]string{"v1.0.0": git("rev-parse", "v1.0.0^{commit}"), "v1.0.1": git("rev-parse", "v1.0.1^{commit}"), "v9.9.9": ""} {
		cmd := exec.Command("bash", "-c", commit+"\n"+builder+"\necho \"$COMMIT\"")
		cmd.Env = append(env, "REPO=o/r", "VERSION="+tag)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		got := strings.TrimSpace(string(out))
		switch {
		case want != "" && (err != nil || got != want):
			t.Errorf("tag %s: COMMIT %q, %v; want %s\n%s", tag, got, err, want, stderr.String())
		case want == "" && (err == nil || !strings.Contains(stderr.String(), "no commit for tag")):
			t.Errorf("tag %s (absent): %v, COMMIT %q; want BUILDER to stop, saying so\n%s", tag, err, got, stderr.String())
		}
	}
}
