package release_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPublishChecksComeFirst: across the jobs of a release run (release.yml
// and build.yml as it calls it), every step that pushes, signs, attests or
// uploads runs in a job that needs, directly or not, the jobs that check
// what can stop the release (the tag, gh's version, the rebuild compared
// with another build, the registry's and the GitHub release's state), or
// after those checks in its own job; within a job no check follows a
// write; build.yml attests only the digests the checks read. In the
// publish job, the provenance bundles too are verified and counted before
// the first write. So a run that stops has attested, pushed, signed and
// uploaded nothing, except a stop in publish on what changed since the
// checks or on the provenance bundles, which exist only once attested.
func TestPublishChecksComeFirst(t *testing.T) {
	jobs := releaseJobs(t)
	for _, v := range append(crossJobViolations(jobs), checkedDigests(jobs)...) {
		t.Error(v)
	}
	if j := jobs["build/attest"]; j == nil || !slices.ContainsFunc(j.Steps, writer) {
		t.Error("no job build/attest that attests: the cross-job test reads no attestation")
	}
	steps := jobSteps(t, workflowPath("release.yml"), "publish")
	first := slices.IndexFunc(steps, writer)
	if first < 0 {
		t.Fatal("the publish job has no step that pushes, signs or uploads")
	}
	for i, s := range steps[first:] {
		if !writer(s) {
			t.Errorf("step %d %q checks or gathers after step %d %q has written: a stop there leaves the registry changed", first+i+1, s.Name, first+1, steps[first].Name)
		}
	}
	// github-state must expect the provenance bundles publish attaches, or
	// it reads them as assets of no file of the build.
	provenance := regexp.MustCompile(`PROVENANCE="([^"]+)"`)
	var named []string
	for _, s := range steps {
		if strings.Contains(s.Run, "make release-github-state") || strings.Contains(s.Run, "make release-publish") {
			m := provenance.FindStringSubmatch(s.Run)
			if m == nil {
				t.Errorf("step %q runs release-github-state or release-publish without PROVENANCE", s.Name)
				continue
			}
			named = append(named, m[1])
		}
	}
	if len(named) != 2 || named[0] != named[1] {
		t.Errorf("release-github-state and release-publish must name the same PROVENANCE: %q", named)
	}
	// Before the provenance bundles are written (in a job before attest),
	// github-state must still know them, as PENDING: else a published
	// release's bundles read as an asset of no file and stop every re-run,
	// and PROVENANCE there names a file that does not exist yet.
	pending := regexp.MustCompile(`PENDING="([^"]+)"`)
	for _, name := range sortedKeys(jobs) {
		js := jobs[name].Steps
		for i, s := range js {
			if !strings.Contains(s.Run, "make release-github-state") {
				continue
			}
			written := slices.ContainsFunc(js[:i], func(p workflowStep) bool {
				return strings.Contains(p.Run, "gh attestation verify") && strings.Contains(p.Run, ".intoto.jsonl")
			})
			m := map[bool]*regexp.Regexp{true: provenance, false: pending}[written].FindStringSubmatch(s.Run)
			if m == nil || len(named) == 0 || m[1] != named[0] {
				t.Errorf("job %s step %q: release-github-state must name the provenance bundles %q as %s (bundles written before it: %v)",
					name, s.Name, named, map[bool]string{true: "PROVENANCE", false: "PENDING"}[written], written)
			}
		}
	}
	for _, want := range []string{"gh --version", "make release-build", "gh attestation verify", "make release-check", "make release-github-state"} {
		if !slices.ContainsFunc(steps[:first], func(s workflowStep) bool { return strings.Contains(s.Run, want) }) {
			t.Errorf("no step before the first write runs %q", want)
		}
	}
}

// TestGhVersionChecked runs the gh version check of release.yml's publish
// job and build.yml's build job for real: it comes before any step that
// runs gh attestation verify, and passes only a gh at or after the one
// that matches --signer-workflow literally. That gh (2.97.0) anchors the
// match at the start only, so the signer workflow given is
// build.yml@<the tag's ref>: TestBuilderDryRun and
// TestPublishAttachesThisTagsProvenance hold a look-alike
// build.yml-copy.yml attestation to it.
func TestGhVersionChecked(t *testing.T) {
	runner := newStepRunner(t, "")
	for file, job := range map[string]string{"release.yml": "publish", "build.yml": "build"} {
		steps := jobSteps(t, workflowPath(file), job)
		check := slices.IndexFunc(steps, func(s workflowStep) bool { return strings.Contains(s.Run, "gh --version") })
		verify := slices.IndexFunc(steps, func(s workflowStep) bool { return strings.Contains(s.Run, "gh attestation verify") })
		if check < 0 || verify < 0 || check > verify {
			t.Errorf("%s job %s: the gh version check (step %d) must come before the first gh attestation verify (step %d)", file, job, check+1, verify+1)
			continue
		}
		if steps[check].Env["GH_MIN"] != "2.97.0" {
			t.Errorf("%s: GH_MIN %q, want 2.97.0 (the first gh that matches --signer-workflow literally)", file, steps[check].Env["GH_MIN"])
		}
		for v, ok := range map[string]bool{"2.97.0": true, "2.97.1": true, "2.100.0": true, "3.0.0": true, "2.96.9": false, "2.60.0": false, "2.9.0": false, "unknown": false} {
			_, log, err := runner.run(steps[check], t.TempDir(), githubContext(), "FAKE_GH_VERSION="+v)
			if ok != (err == nil) || (!ok && !strings.Contains(log, "older than 2.97.0")) {
				t.Errorf("%s: gh %s: %v; want pass %v\n%s", file, v, err, ok, log)
			}
		}
		for _, s := range steps {
			for _, m := range regexp.MustCompile(`--signer-workflow "\$([A-Z_]+)"`).FindAllStringSubmatch(s.Run, -1) {
				if !strings.HasSuffix(s.Env[m[1]], "/.github/workflows/build.yml@${{ github.ref }}") {
					t.Errorf("%s step %q: --signer-workflow $%s is %q: without @<ref> gh matches it as a prefix", file, s.Name, m[1], s.Env[m[1]])
				}
			}
		}
	}
}
