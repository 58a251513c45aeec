package release_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The supply-chain rules every workflow keeps (what OpenSSF Scorecard's
// Pinned-Dependencies and Token-Permissions checks look for, and more):
//
//   - every action is pinned by a full commit SHA, with its version in a
//     comment for the reader and for Dependabot;
//   - the workflow-level token grants nothing (or read only); each job
//     says what it needs;
//   - packages/id-token write appear in at most one job, which runs only
//     after a job that runs `make test`, and restores no cache (a cache is
//     writable by any workflow run of the repository, pull requests too);
//   - actions/checkout keeps no credentials in .git/config;
//   - setup-go installs exactly go.mod's toolchain line.
func workflowViolations(data []byte, toolchain string) []string {
	bad := unpinnedActions(data)
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	var wf struct {
		Permissions any `json:"permissions"`
		Jobs        map[string]struct {
			Needs       any `json:"needs"`
			Permissions any `json:"permissions"`
			Steps       []struct {
				Uses string         `json:"uses"`
				Run  string         `json:"run"`
				With map[string]any `json:"with"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		return append(bad, "not YAML: "+err.Error())
	}
	if wf.Permissions == nil {
		badf("no workflow-level permissions (the default token may write)")
	} else if w := writes(wf.Permissions); len(w) > 0 {
		badf("workflow-level permissions grant write: %v", w)
	}
	testJobs := map[string]bool{}
	for name, j := range wf.Jobs {
		for _, s := range j.Steps {
			if slices.Contains(makeInvocations(s.Run), "test") {
				testJobs[name] = true
			}
		}
	}
	var publishers []string
	for _, name := range sortedKeys(wf.Jobs) {
		j := wf.Jobs[name]
		if j.Permissions == nil {
			badf("job %s: no job-level permissions", name)
		}
		w := writes(j.Permissions)
		if slices.Contains(w, "packages") || slices.Contains(w, "id-token") || slices.Contains(w, "write-all") {
			publishers = append(publishers, name)
			if !slices.ContainsFunc(needs(j.Needs), func(n string) bool { return testJobs[n] }) {
				badf("job %s: writes packages or signs without needing a job that runs make test", name)
			}
		}
		for i, s := range j.Steps {
			action, _, _ := strings.Cut(s.Uses, "@")
			switch action {
			case "actions/checkout":
				if v, ok := s.With["persist-credentials"]; !ok || v != false {
					badf("job %s step %d: actions/checkout without persist-credentials: false", name, i+1)
				}
			case "actions/setup-go":
				if v := fmt.Sprint(s.With["go-version"]); "go"+v != toolchain {
					badf("job %s step %d: setup-go go-version %q, go.mod's toolchain is %s", name, i+1, v, toolchain)
				}
				if len(w) > 0 && s.With["cache"] != false {
					badf("job %s step %d: setup-go restores its module cache in a job with write permissions (cache: false)", name, i+1)
				}
			case "actions/cache", "actions/cache/restore":
				if len(w) > 0 {
					badf("job %s step %d: restores a cache in a job with write permissions", name, i+1)
				}
			}
		}
	}
	if len(publishers) > 1 {
		badf("packages/id-token write in %d jobs (%v); one job publishes", len(publishers), publishers)
	}
	return bad
}

// unpinnedActions reads the raw lines, since the version comments are
// lost in YAML decoding.
func unpinnedActions(data []byte) []string {
	var bad []string
	for n, line := range strings.Split(string(data), "\n") {
		m := usesLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ref := m[1]
		if strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "docker://") {
			continue
		}
		if !pinnedRef.MatchString(ref) {
			bad = append(bad, fmt.Sprintf("line %d: %s is not pinned by a full commit SHA", n+1, ref))
		} else if !versionComment.MatchString(m[2]) {
			bad = append(bad, fmt.Sprintf("line %d: %s has no version comment (# vX.Y.Z)", n+1, ref))
		}
	}
	return bad
}

var (
	usesLine       = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*["']?([^\s"'#]+)["']?\s*(#.*)?$`)
	pinnedRef      = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$`)
	versionComment = regexp.MustCompile(`^#\s*v[0-9]+\.[0-9]+\.[0-9]+\S*\s*$`)
)

// writes lists the scopes a permissions value grants write on.
func writes(p any) []string {
	switch v := p.(type) {
	case string:
		if v == "write-all" {
			return []string{"write-all"}
		}
	case map[string]any:
		var out []string
		for k, val := range v {
			if val == "write" {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	return nil
}

func needs(n any) []string {
	switch v := n.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// goToolchain reads go.mod's toolchain line.
func goToolchain(t *testing.T) string {
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^toolchain (go[0-9]+\.[0-9]+\.[0-9]+)\s*$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod has no toolchain line: the release would build with whatever Go the runner has")
	}
	return string(m[1])
}

// TestWorkflowRules holds the repository's workflows to the rules.
func TestWorkflowRules(t *testing.T) {
	toolchain := goToolchain(t)
	for _, f := range workflows(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range workflowViolations(data, toolchain) {
			t.Errorf("%s: %s", f, v)
		}
	}
}

// goodWorkflow keeps every rule; each case of TestWorkflowRulesCatch breaks
// one, so a passing TestWorkflowRules means something.
const goodWorkflow = `name: x
on: push
permissions: {}
jobs:
  test:
    runs-on: ubuntu-24.04
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262 # v4.4.0
        with:
          persist-credentials: false
      - uses: actions/setup-go@40f1582b2485089dde7abd97c1529aa768e1baff # v5.6.0
        with:
          go-version: "1.26.8"
      - uses: actions/cache@0057852bfaa89a56745cba8c7296529d2fc39830 # v4.3.0
        with:
          path: x
          key: y
      - run: make test
  publish:
    needs: test
    runs-on: ubuntu-24.04
    permissions:
      contents: write
      packages: write
      id-token: write
    steps:
      - uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262 # v4.4.0
        with:
          persist-credentials: false
      - uses: actions/setup-go@40f1582b2485089dde7abd97c1529aa768e1baff # v5.6.0
        with:
          go-version: "1.26.8"
          cache: false
      - run: make image-push
`

func TestWorkflowRulesCatch(t *testing.T) {
	const toolchain = "go1.26.8"
	if v := workflowViolations([]byte(goodWorkflow), toolchain); len(v) > 0 {
		t.Fatalf("the good workflow breaks rules: %v", v)
	}
	checkout := "actions/checkout@11d5960a326750d5838078e36cf38b85af677262 # v4.4.0"
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"tag-pinned action", checkout, "actions/checkout@v4", "actions/checkout@v4 is not pinned"},
		{"branch-pinned action", checkout, "actions/checkout@main", "not pinned by a full commit SHA"},
		{"short SHA", checkout, "actions/checkout@11d5960 # v4.4.0", "not pinned by a full commit SHA"},
		{"SHA without version comment", checkout, "actions/checkout@11d5960a326750d5838078e36cf38b85af677262", "no version comment"},
		{"workflow-level packages: write", "permissions: {}\n", "permissions:\n  packages: write\n", "workflow-level permissions grant write: [packages]"},
		{"workflow-level write-all", "permissions: {}\n", "permissions: write-all\n", "workflow-level permissions grant write"},
		{"no workflow-level permissions", "permissions: {}\n", "", "no workflow-level permissions"},
		{"job without permissions", "    permissions:\n      contents: read\n", "", "job test: no job-level permissions"},
		{"checkout keeps credentials", "persist-credentials: false", "persist-credentials: true", "without persist-credentials: false"},
		{"setup-go from go.mod's go line", `go-version: "1.26.8"`, "go-version-file: go.mod", "setup-go go-version"},
		{"setup-go another version", `go-version: "1.26.8"`, `go-version: "1.26.0"`, "go.mod's toolchain is go1.26.8"},
		{"publish without the test job", "    needs: test\n", "", "without needing a job that runs make test"},
		{"publish after a job that tests nothing", "      - run: make test\n", "      - run: make check\n", "without needing a job that runs make test"},
		{"cache in the publishing job", "      - run: make image-push\n", "      - uses: actions/cache@0057852bfaa89a56745cba8c7296529d2fc39830 # v4.3.0\n      - run: make image-push\n", "restores a cache in a job with write permissions"},
		{"setup-go cache in the publishing job", "          cache: false\n", "", "setup-go restores its module cache"},
		{"two publishing jobs", "    permissions:\n      contents: read\n", "    permissions:\n      id-token: write\n", "in 2 jobs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := strings.Replace(goodWorkflow, c.old, c.new, 1)
			if bad == goodWorkflow {
				t.Fatalf("the case changes nothing: %q not in the good workflow", c.old)
			}
			v := workflowViolations([]byte(bad), toolchain)
			if !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, c.want) }) {
				t.Errorf("want a violation containing %q, got %q", c.want, v)
			}
		})
	}
}
