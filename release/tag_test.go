package release_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/releaseplan"

	"sigs.k8s.io/yaml"
)

// TestTagMustBeSemVer runs release.yml's first step for real: a tag that
// is not v and a SemVer version (v1.2.3rc1 and v1.2.3.4 pass the
// trigger's glob) stops the run with a message, before anything is built:
// the check is the test job's first step, and every other job needs the
// test job. Its expression is internal/releaseplan's, which decides
// pre-releases and which kse-release checks again.
func TestTagMustBeSemVer(t *testing.T) {
	steps := jobSteps(t, workflowPath("release.yml"), "test")
	check := steps[0]
	m := regexp.MustCompile(`(?m)^semver='([^']+)'$`).FindStringSubmatch(check.Run)
	if m == nil {
		t.Fatalf("release.yml's test job does not start with the tag check (semver='...'): step 1 is %q", check.Name)
	}
	if m[1] != releaseplan.TagPattern {
		t.Errorf("the workflow's tag expression is not internal/releaseplan.TagPattern:\n%s\n%s", m[1], releaseplan.TagPattern)
	}
	runner := newStepRunner(t, "")
	for tag, ok := range map[string]bool{
		"v1.2.3": true, "v0.1.0-rc.1": true, "v1.0.0-alpha.beta.1": true, "v2.0.0-0": true,
		"v1.2.3rc1": false, "v1.2.3.4": false, "v1.2.3+build.5": false, "v01.2.3": false, "v1.2.3-rc.01": false, "1.2.3": false, "v1.2.3-": false,
	} {
		_, log, err := runner.run(check, t.TempDir(), githubContext(), "GITHUB_REF_NAME="+tag, "GITHUB_REF=refs/tags/"+tag)
		switch {
		case ok && err != nil:
			t.Errorf("%s refused: %v\n%s", tag, err, log)
		case ok && !strings.Contains(log, "pre-release: "+map[bool]string{true: "true", false: "false"}[releaseplan.Prerelease(tag)]):
			t.Errorf("%s: the step and releaseplan.Prerelease disagree on pre-release:\n%s", tag, log)
		case !ok && (err == nil || !strings.Contains(log, "'"+tag+"' is not a release tag") || !strings.Contains(log, "vMAJOR.MINOR.PATCH-PRERELEASE")):
			t.Errorf("%s: %v; want a refusal naming the tag and what a release tag is\n%s", tag, err, log)
		}
		if err := releaseplan.CheckTag(tag); (err == nil) != ok {
			t.Errorf("releaseplan.CheckTag(%q) = %v, the workflow says %v", tag, err, ok)
		}
	}
	// Nothing runs before the check, and nothing runs without the test job.
	data, err := os.ReadFile(workflowPath("release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf workflowFile
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	for name, j := range wf.Jobs {
		if name != "test" && !slices.Contains(needs(j.Needs), "test") {
			t.Errorf("job %s does not need the test job, whose first step checks the tag", name)
		}
	}
}
