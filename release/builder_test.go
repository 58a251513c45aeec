package release_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGH stands in for `gh attestation verify FILE --signer-workflow W
// --source-ref R ...` the way GitHub's CLI decides it: it succeeds when
// $ATTESTATIONS has a line "HEX WORKFLOW REF" for the file's SHA-256 that
// the flags given allow (a flag not given allows any), and with --format
// json prints every such attestation, its bundle standing for the line. So
// a step that forgets --source-ref takes another tag's attestation for
// this tag's.
const fakeGH = `#!/bin/bash
[ "$1 $2" = "attestation verify" ] || { echo "fake gh: $* is not modelled" >&2; exit 2; }
file=$3; shift 3
wf= ref= format=
while [ $# -gt 0 ]; do
  case $1 in
  --signer-workflow) wf=$2; shift 2 ;;
  --source-ref) ref=$2; shift 2 ;;
  --format) format=$2; shift 2 ;;
  --repo|--predicate-type) shift 2 ;;
  *) shift ;;
  esac
done
hex=$(sha256sum "$file" | cut -d' ' -f1)
found=
while read -r h w r; do
  [ "$h" = "$hex" ] || continue
  [ -z "$wf" ] || [ "$w" = "$wf" ] || continue
  [ -z "$ref" ] || [ "$r" = "$ref" ] || continue
  found="$found${found:+,}{\"attestation\":{\"bundle\":{\"subject\":\"$h\",\"workflow\":\"$w\",\"ref\":\"$r\"}}}"
done <"$ATTESTATIONS"
if [ -z "$found" ]; then
  echo "fake gh: no attestation of $file for ${wf:-any workflow} at ${ref:-any ref}" >&2
  exit 1
fi
if [ "$format" = json ]; then echo "[$found]"; fi
`

// fakeMake runs the one target the builder's plan step calls, as the
// Makefile does, with the built kse-release.
const fakeMake = `#!/bin/bash
t=
for a; do case $a in *=*) export "${a%%=*}=${a#*=}" ;; -*) ;; *) t=$a ;; esac; done
case $t in
release-plan) exec "$KSE_RELEASE" plan -dir bin/release -state "$STATE" -scope "$SCOPE" ;;
*) echo "fake make: $t is not modelled" >&2; exit 2 ;;
esac
`

// stepRunner runs a step's run: script with bash as GitHub's runner does
// (bash -e -o pipefail), the fakes first on PATH, in dir.
type stepRunner struct {
	fakes, kseRelease string
}

func newStepRunner(t *testing.T, kseRelease string) stepRunner {
	fakes := t.TempDir()
	for name, script := range map[string]string{"gh": fakeGH, "make": fakeMake} {
		if err := os.WriteFile(filepath.Join(fakes, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return stepRunner{fakes: fakes, kseRelease: kseRelease}
}

// run runs step s in dir with the expressions of its env expanded from
// ctx and extra variables; it returns the step's outputs ($GITHUB_OUTPUT)
// and its combined output.
func (r stepRunner) run(s workflowStep, dir string, ctx map[string]string, extra ...string) (map[string]string, string, error) {
	ghOut := filepath.Join(dir, "github-output")
	if err := os.WriteFile(ghOut, nil, 0o644); err != nil {
		return nil, "", err
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s.Run)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+r.fakes+":"+os.Getenv("PATH"), "GITHUB_OUTPUT="+ghOut, "KSE_RELEASE="+r.kseRelease,
		"GITHUB_REF=refs/tags/"+version, "GITHUB_REF_NAME="+version, "GITHUB_REPOSITORY=o/r", "VERSION="+version)
	for k, v := range s.Env {
		x, err := expand(v, ctx)
		if err != nil {
			return nil, "", err
		}
		cmd.Env = append(cmd.Env, k+"="+x)
		if os.Getenv("DEBUG_DRYRUN") != "" {
			fmt.Fprintf(os.Stderr, "%s=%q\n", k, x)
		}
	}
	cmd.Env = append(cmd.Env, extra...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	data, rerr := os.ReadFile(ghOut)
	if rerr != nil {
		return nil, out.String(), rerr
	}
	outputs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			outputs[k] = v
		}
	}
	return outputs, out.String(), err
}

// builderRun is one dry run of build.yml: the build job's steps that
// decide (outputs of the build step modelled, the plan step run for real),
// then the attest job: its first step run for real, its attest steps by
// their if:. It returns the digests each attest step signs.
type builderRun struct {
	runner       stepRunner
	buildSteps   []workflowStep
	attestSteps  []workflowStep
	attestations string // the fake gh's store
}

func (b builderRun) run(t *testing.T, rebuilt map[string]string) ([]string, string, error) {
	work := t.TempDir()
	files := releaseDir(t, filepath.Join(work, "bin/release"))
	build := map[string]string{
		"sha256sums": b64(files["SHA256SUMS"]), "image-digest": strings.TrimSpace(files["image.digest"]),
		"chart-digest": strings.TrimSpace(files["chart.digest"]), "image-name": "ghcr.io/o/r", "chart-name": "ghcr.io/o/charts/r",
	}
	var plan workflowStep
	for _, s := range b.buildSteps {
		if strings.Contains(s.Run, "release-plan SCOPE=provenance") {
			plan = s
		}
	}
	if plan.Run == "" {
		return nil, "", fmt.Errorf("build.yml's build job has no step running make release-plan SCOPE=provenance")
	}
	ctx := githubContext()
	out, log, err := b.runner.run(plan, work, ctx, "ATTESTATIONS="+b.attestations)
	if err != nil {
		return nil, log, fmt.Errorf("the plan step: %v\n%s", err, log)
	}
	for k, v := range out {
		build[k] = v
	}
	for k, v := range build {
		ctx["build."+k] = v
	}
	if rebuilt == nil {
		rebuilt = map[string]string{"sha256sums": build["sha256sums"], "image-digest": build["image-digest"], "chart-digest": build["chart-digest"]}
	}
	for k, v := range rebuilt {
		ctx["rebuild."+k] = v
	}
	attestDir := t.TempDir() // the attest job checks out nothing
	var attested []string
	for _, s := range b.attestSteps {
		on, err := enabled(s, build)
		if err != nil || !on {
			if err != nil {
				return nil, "", err
			}
			continue
		}
		if s.Run != "" {
			_, log, err := b.runner.run(s, attestDir, ctx)
			if err != nil {
				return attested, log, fmt.Errorf("step %q failed: %v (build outputs %q)", s.Name, err, build)
			}
			continue
		}
		switch {
		case s.With["subject-checksums"] != "":
			data, err := os.ReadFile(filepath.Join(attestDir, s.With["subject-checksums"]))
			if err != nil {
				return nil, "", fmt.Errorf("attest step %q: %v", s.Name, err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				attested = append(attested, strings.Fields(line)[0])
			}
		case s.With["subject-digest"] != "":
			d, err := expand(s.With["subject-digest"], ctx)
			if err != nil {
				return nil, "", err
			}
			attested = append(attested, strings.TrimPrefix(d, "sha256:"))
		default:
			return nil, "", fmt.Errorf("step %q attests a subject the dry run does not know", s.Name)
		}
	}
	return attested, "", nil
}

// TestBuilderDryRun runs build.yml's deciding steps for real (bash, with
// gh and make faked): whichever of the subjects (each release file, the
// index, the chart) has provenance by build.yml for this tag (none, all,
// each one alone, all but each one), with every subject also attested for
// another tag and by another workflow, the attest job signs exactly the
// others, once.
func TestBuilderDryRun(t *testing.T) {
	bin := buildKseRelease(t)
	files := releaseDir(t, t.TempDir())
	var subjects []string // hex
	for _, line := range strings.Split(strings.TrimSpace(files["SHA256SUMS"]), "\n") {
		subjects = append(subjects, strings.Fields(line)[0])
	}
	subjects = append(subjects, hexSum(files["image.manifest.json"]), hexSum(files["chart.manifest.json"]))
	b := builderRun{runner: newStepRunner(t, bin), buildSteps: jobSteps(t, workflowPath("build.yml"), "build"),
		attestSteps: jobSteps(t, workflowPath("build.yml"), "attest")}
	const builder = "o/r/.github/workflows/build.yml"
	all := 1<<len(subjects) - 1
	states := []int{0, all}
	for i := range subjects {
		states = append(states, 1<<i, all&^(1<<i))
	}
	for _, bits := range states {
		var store strings.Builder
		have := map[string]bool{}
		for i, d := range subjects {
			// The same bytes attested for the release candidate, and by
			// release.yml for this tag: neither counts.
			fmt.Fprintf(&store, "%s %s refs/tags/v9.8.7-rc.0\n%s o/r/.github/workflows/release.yml refs/tags/%s\n", d, builder, d, version)
			if bits&(1<<i) != 0 {
				have[d] = true
				fmt.Fprintf(&store, "%s %s refs/tags/%s\n", d, builder, version)
			}
		}
		b.attestations = filepath.Join(t.TempDir(), "attestations")
		if err := os.WriteFile(b.attestations, []byte(store.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		attested, log, err := b.run(t, nil)
		if err != nil {
			t.Fatalf("attested for this tag %07b: %v\n%s", bits, err, log)
		}
		for _, d := range attested {
			if have[d] {
				t.Errorf("attested for this tag %07b: %s attested twice", bits, d)
			}
			have[d] = true
		}
		for _, d := range subjects {
			if !have[d] {
				t.Errorf("attested for this tag %07b: %s left without provenance for %s", bits, d, version)
			}
		}
	}
}

// TestAttestHoldsSubjectsToTheRebuild: the attest job attests nothing
// unless the independent rebuild made the same files and digests.
func TestAttestHoldsSubjectsToTheRebuild(t *testing.T) {
	bin := buildKseRelease(t)
	b := builderRun{runner: newStepRunner(t, bin), buildSteps: jobSteps(t, workflowPath("build.yml"), "build"),
		attestSteps: jobSteps(t, workflowPath("build.yml"), "attest")}
	b.attestations = filepath.Join(t.TempDir(), "none")
	if err := os.WriteFile(b.attestations, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	files := releaseDir(t, t.TempDir())
	sums := files["SHA256SUMS"]
	other := strings.Replace(sums, hexSum("amd64"), hexSum("amd64, rebuilt differently"), 1)
	same := map[string]string{"sha256sums": b64(sums), "image-digest": strings.TrimSpace(files["image.digest"]), "chart-digest": strings.TrimSpace(files["chart.digest"])}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range same {
			m[a] = b
		}
		m[k] = v
		return m
	}
	if attested, log, err := b.run(t, same); err != nil || len(attested) != 7 {
		t.Fatalf("the same rebuild: attested %d subjects, %v\n%s", len(attested), err, log)
	}
	for name, rebuilt := range map[string]map[string]string{
		"a file of other bytes": with("sha256sums", b64(other)),
		"another image digest":  with("image-digest", "sha256:"+strings.Repeat("3", 64)),
		"another chart digest":  with("chart-digest", "sha256:"+strings.Repeat("4", 64)),
		"no rebuild outputs":    {"sha256sums": "", "image-digest": "", "chart-digest": ""},
	} {
		attested, log, err := b.run(t, rebuilt)
		if err == nil || len(attested) > 0 || !strings.Contains(log, "::error::") || !strings.Contains(log, "nothing is attested") {
			t.Errorf("%s: attested %v, %v; want the first step to stop with a message\n%s", name, attested, err, log)
		}
	}
}

// TestPublishAttachesThisTagsProvenance runs the publish job's provenance
// step for real (gh faked): the .intoto.jsonl it leaves for the release
// holds the bundles of build.yml's attestations for this tag, one per
// subject, and none of another tag's or another workflow's; a subject
// without provenance for this tag fails the step, so the release is not
// published without it.
func TestPublishAttachesThisTagsProvenance(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the step runs jq, as GitHub's runners have it; this machine has none")
		}
		t.Skip("no jq")
	}
	var step workflowStep
	for _, s := range jobSteps(t, workflowPath("release.yml"), "publish") {
		if strings.Contains(s.Run, "gh attestation verify") {
			step = s
		}
	}
	if step.Run == "" {
		t.Fatal("release.yml's publish job has no step collecting the provenance bundles")
	}
	runner := newStepRunner(t, "")
	for _, missing := range []int{-1, 0, 6} {
		work := t.TempDir()
		files := releaseDir(t, filepath.Join(work, "bin/release"))
		var subjects []string
		for _, line := range strings.Split(strings.TrimSpace(files["SHA256SUMS"]), "\n") {
			subjects = append(subjects, strings.Fields(line)[0])
		}
		subjects = append(subjects, hexSum(files["image.manifest.json"]), hexSum(files["chart.manifest.json"]))
		var store strings.Builder
		for i, d := range subjects {
			fmt.Fprintf(&store, "%s o/r/.github/workflows/build.yml refs/tags/v9.8.7-rc.0\n%s o/r/.github/workflows/release.yml refs/tags/%s\n", d, d, version)
			if i != missing {
				fmt.Fprintf(&store, "%s o/r/.github/workflows/build.yml refs/tags/%s\n", d, version)
			}
		}
		attestations := filepath.Join(work, "attestations")
		if err := os.WriteFile(attestations, []byte(store.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		_, log, err := runner.run(step, work, githubContext(), "ATTESTATIONS="+attestations)
		if missing >= 0 {
			if err == nil {
				t.Errorf("subject %d without provenance for %s: the step passed\n%s", missing, version, log)
			}
			continue
		}
		if err != nil {
			t.Fatalf("the step: %v\n%s", err, log)
		}
		data, err := os.ReadFile(filepath.Join(work, "bin/release/kubecost-s3-exporter_"+version+".intoto.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		got := map[string]bool{}
		for _, l := range lines {
			var b struct{ Subject, Workflow, Ref string }
			if err := json.Unmarshal([]byte(l), &b); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			if b.Workflow != "o/r/.github/workflows/build.yml" || b.Ref != "refs/tags/"+version {
				t.Errorf("the release's provenance holds %+v, not build.yml's for %s", b, version)
			}
			got[b.Subject] = true
		}
		if len(lines) != len(subjects) || len(got) != len(subjects) {
			t.Errorf("%d bundles for %d subjects:\n%s", len(lines), len(subjects), data)
		}
	}
}
