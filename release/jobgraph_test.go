package release_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// releaseJob is one job of a release run: a job of release.yml, or a job
// of build.yml as release.yml's job calling it runs it ("build/attest").
// After holds every job it needs, directly or through others: a job of a
// called workflow also needs whatever its caller's job needs.
type releaseJob struct {
	Name  string
	Steps []workflowStep
	After map[string]bool
	With  map[string]string // a calling job's inputs to the called workflow
}

// releaseJobs reads release.yml and the reusable workflows its jobs call.
func releaseJobs(t *testing.T) map[string]*releaseJob {
	t.Helper()
	type job struct {
		Needs any               `json:"needs"`
		Uses  string            `json:"uses"`
		With  map[string]string `json:"with"`
	}
	read := func(file string) map[string]job {
		data, err := os.ReadFile(workflowPath(file))
		if err != nil {
			t.Fatal(err)
		}
		var wf struct{ Jobs map[string]job }
		if err := yaml.Unmarshal(data, &wf); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return wf.Jobs
	}
	direct := map[string][]string{}
	if !runsAfterFailure.MatchString("always() && x") || runsAfterFailure.MatchString("steps.plan.outputs.sign != ''") {
		t.Error("runsAfterFailure misreads a condition")
	}
	jobs := map[string]*releaseJob{}
	for name, j := range read("release.yml") {
		if j.Uses == "" {
			jobs[name] = &releaseJob{Name: name, Steps: jobSteps(t, workflowPath("release.yml"), name)}
			direct[name] = needs(j.Needs)
			continue
		}
		called, ok := strings.CutPrefix(j.Uses, "./.github/workflows/")
		if !ok {
			t.Fatalf("job %s calls %s, not a workflow of this repository", name, j.Uses)
		}
		jobs[name] = &releaseJob{Name: name, With: j.With}
		direct[name] = needs(j.Needs)
		for inner, c := range read(called) {
			n := name + "/" + inner
			jobs[n] = &releaseJob{Name: n, Steps: jobSteps(t, workflowPath(called), inner)}
			direct[n] = append([]string{name}, needs(j.Needs)...)
			for _, d := range needs(c.Needs) {
				direct[n] = append(direct[n], name+"/"+d)
			}
		}
	}
	var walk func(from string, seen map[string]bool)
	walk = func(from string, seen map[string]bool) {
		for _, d := range direct[from] {
			if jobs[d] == nil {
				t.Fatalf("job %s needs %s, which no workflow of the run has", from, d)
			}
			if !seen[d] {
				seen[d] = true
				walk(d, seen)
			}
		}
	}
	for n, j := range jobs {
		j.After = map[string]bool{}
		walk(n, j.After)
	}
	return jobs
}

// writer says whether a step writes anything users or verifiers see:
// pushes, signs, attests (provenance), uploads. Every other step only
// reads or checks, and may stop the run.
func writer(s workflowStep) bool {
	if slices.ContainsFunc(makeInvocations(s.Run), func(t string) bool {
		return t == "image-push" || t == "chart-push" || t == "sign" || t == "release-publish"
	}) {
		return true
	}
	action, _, _ := strings.Cut(s.Uses, "@")
	switch action {
	case "actions/attest", "actions/attest-build-provenance", "actions/attest-sbom", "docker/build-push-action",
		"softprops/action-gh-release", "actions/upload-release-asset":
		return true
	}
	return writesInline.MatchString(s.Run)
}

var runsAfterFailure = regexp.MustCompile(`\b(always|failure|cancelled)\(\)`)

var writesInline = regexp.MustCompile(`\b(cosign (sign|sign-blob|attest)|gh release (create|upload|edit)|gh attestation sign|docker push|helm push|oras (push|attach))\b`)

// stopChecks are the checks that can stop a release, each a step that
// every step that writes must follow: in a job it needs, or earlier in
// its own job.
var stopChecks = []struct {
	name string
	is   func(workflowStep) bool
}{
	{"the tag is v and a SemVer version", func(s workflowStep) bool { return strings.Contains(s.Run, `=~ $semver`) }},
	{"gh matches --signer-workflow literally (its version)", func(s workflowStep) bool { return strings.Contains(s.Run, "gh --version") }},
	{"the build is another build's, byte for byte", func(s workflowStep) bool {
		return strings.Contains(s.Run, "base64 -d") && strings.Contains(s.Run, "diff -u")
	}},
	{"the registry's tags and signatures of this version", func(s workflowStep) bool { return strings.Contains(s.Run, "make release-check") }},
	{"the tag's GitHub releases (drafts, unknown and half-uploaded assets, a published release)", func(s workflowStep) bool {
		return strings.Contains(s.Run, "make release-github-state")
	}},
}

// crossJobViolations: every step that writes, in any job of the run,
// comes after every stop check (in a job its job needs, or earlier in its
// own job), and after the first write in a job only writes follow.
func crossJobViolations(jobs map[string]*releaseJob) []string {
	var bad []string
	writers := 0
	for _, name := range sortedKeys(jobs) {
		j := jobs[name]
		first := slices.IndexFunc(j.Steps, writer)
		if first < 0 {
			continue
		}
		for i, s := range j.Steps[first:] {
			if !writer(s) {
				bad = append(bad, fmt.Sprintf("job %s step %d %q checks or gathers after step %d %q has written: a stop there leaves the release half-changed",
					name, first+i+1, s.Name, first+1, j.Steps[first].Name))
			}
		}
		for i, s := range j.Steps {
			if !writer(s) {
				continue
			}
			writers++
			// A failed step stops the steps after it only while their if:
			// implies success() (GitHub's default status check).
			if runsAfterFailure.MatchString(s.If) {
				bad = append(bad, fmt.Sprintf("job %s step %d %q writes with if: %s, so after a failed check too", name, i+1, s.Name, s.If))
			}
			for _, c := range stopChecks {
				if slices.ContainsFunc(j.Steps[:i], c.is) {
					continue
				}
				if !slices.ContainsFunc(sortedKeys(j.After), func(k string) bool { return slices.ContainsFunc(jobs[k].Steps, c.is) }) {
					bad = append(bad, fmt.Sprintf("job %s step %d %q writes without %s checked first (in a job it needs, or before it)", name, i+1, s.Name, c.name))
				}
			}
		}
	}
	if writers == 0 {
		bad = append(bad, "no step of the run pushes, signs, attests or uploads")
	}
	return bad
}

// checkedDigests: the digests build.yml attests must be those the
// registry and GitHub release checks read, so its caller passes it the
// outputs of the job that runs them, a job the call needs.
func checkedDigests(jobs map[string]*releaseJob) []string {
	var bad []string
	ref := regexp.MustCompile(`^\$\{\{ needs\.([a-z-]+)\.outputs\.([a-z0-9-]+) \}\}$`)
	for _, name := range sortedKeys(jobs) {
		j := jobs[name]
		if j.Steps != nil {
			continue
		}
		for _, k := range []string{"sha256sums", "image-digest", "chart-digest"} {
			m := ref.FindStringSubmatch(j.With["checked-"+k])
			if m == nil || m[2] != k {
				bad = append(bad, fmt.Sprintf("job %s gives checked-%s %q, not a job's output %s", name, k, j.With["checked-"+k], k))
				continue
			}
			from := jobs[m[1]]
			if from == nil || !j.After[m[1]] {
				bad = append(bad, fmt.Sprintf("job %s: checked-%s is job %s's, which it does not need", name, k, m[1]))
				continue
			}
			for _, c := range stopChecks[3:] {
				if !slices.ContainsFunc(from.Steps, c.is) {
					bad = append(bad, fmt.Sprintf("job %s: checked-%s is job %s's, which does not check %s", name, k, m[1], c.name))
				}
			}
		}
	}
	return bad
}

// TestStopChecksFindTheirSteps: each stop check and the writer predicate
// recognise the steps they are meant to, and nothing else, so the
// cross-job test is not vacuous.
func TestStopChecksFindTheirSteps(t *testing.T) {
	for _, s := range []workflowStep{{Run: "make image-push"}, {Uses: "actions/attest@0123"}, {Run: "x\ncosign sign --yes img"},
		{Run: "gh release upload v1 f"}, {Uses: "actions/attest-build-provenance@abc"}} {
		if !writer(s) {
			t.Errorf("writer(%+v) = false", s)
		}
	}
	for _, s := range []workflowStep{{Run: "make release-check"}, {Run: "gh attestation verify f"}, {Uses: "actions/checkout@x"}, {Run: "cosign verify x"}} {
		if writer(s) {
			t.Errorf("writer(%+v) = true", s)
		}
	}
	if !runsAfterFailure.MatchString("always() && x") || runsAfterFailure.MatchString("steps.plan.outputs.sign != ''") {
		t.Error("runsAfterFailure misreads a condition")
	}
	jobs := map[string]*releaseJob{
		"a": {Name: "a", After: map[string]bool{}, Steps: []workflowStep{{Run: "make image-push"}}},
	}
	if bad := crossJobViolations(jobs); len(bad) != len(stopChecks) {
		t.Errorf("a job that writes with no check anywhere: %d violations, want %d: %q", len(bad), len(stopChecks), bad)
	}
}
