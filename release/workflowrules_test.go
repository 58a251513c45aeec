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
//     comment for the reader and for Dependabot (pins_test.go holds both
//     to .github/actions-lock.txt);
//   - the workflow-level token grants nothing (or read only); each job
//     says what it needs;
//   - packages write appears in at most one job; it and every job with
//     id-token or attestations write runs only after a job that runs
//     `make test` (in a reusable workflow, its caller's job does);
//   - attestations write (the SLSA provenance) never sits in the job that
//     writes packages, and the job that signs the attestations checks out
//     no code: the build cannot sign its own provenance;
//   - no job with a write permission restores a cache (a cache is writable
//     by any workflow run of the repository, pull requests too);
//   - actions/checkout keeps no credentials in .git/config;
//   - setup-go installs exactly go.mod's toolchain line;
//   - every `gh attestation verify` pins the builder and the tag
//     (--signer-workflow, --source-ref), the predicate type and
//     GitHub-hosted runners: provenance of the same bytes for another tag,
//     or by another workflow, must not count.
func workflowViolations(data []byte, toolchain string) []string {
	bad := unpinnedActions(data)
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	var wf workflowFile
	if err := yaml.Unmarshal(data, &wf); err != nil {
		return append(bad, "not YAML: "+err.Error())
	}
	if wf.Permissions == nil {
		badf("no workflow-level permissions (the default token may write)")
	} else if w := writes(wf.Permissions); len(w) > 0 {
		badf("workflow-level permissions grant write: %v", w)
	}
	reusable := workflowCall.Match(data)
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
		if slices.Contains(w, "packages") || slices.Contains(w, "write-all") {
			publishers = append(publishers, name)
			if slices.Contains(w, "attestations") || slices.Contains(w, "write-all") {
				badf("job %s: writes packages and attestations: the publishing job could attest its own provenance", name)
			}
		}
		signs := slices.Contains(w, "packages") || slices.Contains(w, "id-token") || slices.Contains(w, "attestations") || slices.Contains(w, "write-all")
		if signs && !reusable && !slices.ContainsFunc(needs(j.Needs), func(n string) bool { return testJobs[n] }) {
			badf("job %s: writes packages or signs without needing a job that runs make test", name)
		}
		bad = append(bad, stepViolations(name, j, w, toolchain)...)
	}
	if len(publishers) > 1 {
		badf("packages write in %d jobs (%v); one job publishes", len(publishers), publishers)
	}
	return bad
}

var (
	workflowCall = regexp.MustCompile(`(?m)^\s+workflow_call:`)
	// ghAttestationVerify is one gh attestation verify command, with its
	// continuation lines.
	ghAttestationVerify = regexp.MustCompile(`gh attestation verify(?:[^\n]*\\\n)*[^\n]*`)
)

type workflowFile struct {
	Permissions any `json:"permissions"`
	Jobs        map[string]workflowJob
}

type workflowJob struct {
	Needs       any    `json:"needs"`
	Permissions any    `json:"permissions"`
	Uses        string `json:"uses"`
	Steps       []struct {
		Uses string         `json:"uses"`
		Run  string         `json:"run"`
		With map[string]any `json:"with"`
	} `json:"steps"`
}

// stepViolations checks one job's steps against its write permissions w.
func stepViolations(name string, j workflowJob, w []string, toolchain string) []string {
	var bad []string
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	for i, s := range j.Steps {
		for _, call := range ghAttestationVerify.FindAllString(s.Run, -1) {
			for _, flag := range []string{"--signer-workflow ", "--source-ref ", "--predicate-type https://slsa.dev/provenance/v1", "--deny-self-hosted-runners"} {
				if !strings.Contains(call, flag) {
					badf("job %s step %d: gh attestation verify without %s", name, i+1, strings.TrimSpace(flag))
				}
			}
		}
		action, _, _ := strings.Cut(s.Uses, "@")
		switch action {
		case "actions/checkout":
			if v, ok := s.With["persist-credentials"]; !ok || v != false {
				badf("job %s step %d: actions/checkout without persist-credentials: false", name, i+1)
			}
			if slices.Contains(w, "attestations") {
				badf("job %s step %d: checks out the repository in the job that signs attestations (build in another job)", name, i+1)
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
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          persist-credentials: false
      - uses: actions/setup-go@b7ad1dad31e06c5925ef5d2fc7ad053ef454303e # v7.0.0
        with:
          go-version: "1.26.8"
      - uses: actions/cache@27d5ce7f107fe9357f9df03efb73ab90386fccae # v5.0.5
        with:
          path: x
          key: y
      - run: make test
  build:
    needs: test
    uses: ./.github/workflows/build.yml
    permissions:
      contents: read
      attestations: write
      id-token: write
  publish:
    needs: test
    runs-on: ubuntu-24.04
    permissions:
      contents: write
      packages: write
      id-token: write
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          persist-credentials: false
      - uses: actions/setup-go@b7ad1dad31e06c5925ef5d2fc7ad053ef454303e # v7.0.0
        with:
          go-version: "1.26.8"
          cache: false
      - run: make image-push
      - run: |
          gh attestation verify f --repo o/r --signer-workflow o/r/.github/workflows/build.yml \
            --source-ref "$GITHUB_REF" --predicate-type https://slsa.dev/provenance/v1 --deny-self-hosted-runners
`

// goodBuilder is a reusable builder that keeps every rule: its attest job
// checks out nothing.
const goodBuilder = `name: b
on:
  workflow_call:
permissions: {}
jobs:
  build:
    runs-on: ubuntu-24.04
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          persist-credentials: false
      - run: make release-build
  attest:
    needs: build
    runs-on: ubuntu-24.04
    permissions:
      id-token: write
      attestations: write
    steps:
      - uses: actions/attest@1e69f48acb82d1966a394da916b4c1698aa569d6 # v4.2.2
        with:
          subject-checksums: x
`

func TestWorkflowRulesCatch(t *testing.T) {
	const toolchain = "go1.26.8"
	for _, good := range []string{goodWorkflow, goodBuilder} {
		if v := workflowViolations([]byte(good), toolchain); len(v) > 0 {
			t.Fatalf("a good workflow breaks rules: %v", v)
		}
	}
	checkout := "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1"
	for _, c := range []struct {
		name, old, new, want string
		builder              bool
	}{
		{"tag-pinned action", checkout, "actions/checkout@v7", "actions/checkout@v7 is not pinned", false},
		{"branch-pinned action", checkout, "actions/checkout@main", "not pinned by a full commit SHA", false},
		{"short SHA", checkout, "actions/checkout@3d3c42e # v7.0.1", "not pinned by a full commit SHA", false},
		{"SHA without version comment", checkout, "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1", "no version comment", false},
		{"remote reusable workflow by tag", "uses: ./.github/workflows/build.yml", "uses: o/r/.github/workflows/b.yml@v2.1.0", "is not pinned", false},
		{"workflow-level packages: write", "permissions: {}\n", "permissions:\n  packages: write\n", "workflow-level permissions grant write: [packages]", false},
		{"workflow-level write-all", "permissions: {}\n", "permissions: write-all\n", "workflow-level permissions grant write", false},
		{"no workflow-level permissions", "permissions: {}\n", "", "no workflow-level permissions", false},
		{"job without permissions", "    permissions:\n      contents: read\n", "", "job test: no job-level permissions", false},
		{"checkout keeps credentials", "persist-credentials: false", "persist-credentials: true", "without persist-credentials: false", false},
		{"setup-go from go.mod's go line", `go-version: "1.26.8"`, "go-version-file: go.mod", "setup-go go-version", false},
		{"setup-go another version", `go-version: "1.26.8"`, `go-version: "1.26.0"`, "go.mod's toolchain is go1.26.8", false},
		{"publish without the test job", "    needs: test\n    runs-on", "    runs-on", "without needing a job that runs make test", false},
		{"builder without the test job", "    needs: test\n    uses:", "    uses:", "job build: writes packages or signs without needing", false},
		{"publish after a job that tests nothing", "      - run: make test\n", "      - run: make check\n", "without needing a job that runs make test", false},
		{"cache in the publishing job", "      - run: make image-push\n", "      - uses: actions/cache@27d5ce7f107fe9357f9df03efb73ab90386fccae # v5.0.5\n      - run: make image-push\n", "restores a cache in a job with write permissions", false},
		{"setup-go cache in the publishing job", "          cache: false\n", "", "setup-go restores its module cache", false},
		{"two publishing jobs", "      attestations: write\n      id-token: write\n", "      packages: write\n", "packages write in 2 jobs", false},
		{"publisher attests", "      packages: write\n", "      packages: write\n      attestations: write\n", "writes packages and attestations", false},
		{"provenance checked for any tag", `--source-ref "$GITHUB_REF" `, "", "gh attestation verify without --source-ref", false},
		{"provenance checked for any workflow", "--signer-workflow o/r/.github/workflows/build.yml ", "", "gh attestation verify without --signer-workflow", false},
		{"attest job checks out the code", "      - uses: actions/attest", "      - uses: " + checkout + "\n        with:\n          persist-credentials: false\n      - uses: actions/attest", "checks out the repository in the job that signs attestations", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			good := map[bool]string{false: goodWorkflow, true: goodBuilder}[c.builder]
			bad := strings.Replace(good, c.old, c.new, 1)
			if bad == good {
				t.Fatalf("the case changes nothing: %q not in the good workflow", c.old)
			}
			v := workflowViolations([]byte(bad), toolchain)
			if !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, c.want) }) {
				t.Errorf("want a violation containing %q, got %q", c.want, v)
			}
		})
	}
}
