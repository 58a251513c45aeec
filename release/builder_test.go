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

// fakeGH stands in for `gh attestation verify FILE ...` the way GitHub's
// CLI decides it: it succeeds when an attestation of the file's SHA-256
// passes every flag given (a flag not given allows any, but the predicate
// type, which defaults to SLSA provenance v1 as gh does since 2.67.0). The
// attestations are the lines "HEX WORKFLOW REF [RUNNER [PREDICATE
// [SOURCE]]]" of $ATTESTATIONS (runner github-hosted, predicate SLSA v1
// and source ref REF unless said: SOURCE differs from REF when a
// workflow of another ref calls build.yml at REF),
// or with --bundle FILE the JSON lines of that file, each the bundle this
// fake prints with --format json. --signer-workflow matches as gh 2.97.0
// does: the certificate's workflow URI
// https://github.com/WORKFLOW@REF must start with
// https://github.com/VALUE (matched literally, anchored at the start
// only), so a value without @REF also admits build.yml-copy.yml. So a step
// that forgets --source-ref takes another tag's attestation for this
// tag's. `gh --version` prints $FAKE_GH_VERSION (2.97.0 unless set).
const fakeGH = `#!/bin/bash
if [ "$1" = --version ] || [ "$1" = version ]; then
  v=${FAKE_GH_VERSION:-2.97.0}
  printf 'gh version %s (2026-08-27)\nhttps://github.com/cli/cli/releases/tag/v%s\n' "$v" "$v"; exit 0
fi
[ "$1 $2" = "attestation verify" ] || { echo "fake gh: $* is not modelled" >&2; exit 2; }
file=$3; shift 3
wf= ref= format= bundle= deny= pred=https://slsa.dev/provenance/v1
while [ $# -gt 0 ]; do
  case $1 in
  --signer-workflow) wf=$2; shift 2 ;;
  --source-ref) ref=$2; shift 2 ;;
  --format) format=$2; shift 2 ;;
  --predicate-type) pred=$2; shift 2 ;;
  --bundle) bundle=$2; shift 2 ;;
  --repo) shift 2 ;;
  --deny-self-hosted-runners) deny=1; shift ;;
  *) echo "fake gh: flag $1 is not modelled" >&2; exit 2 ;;
  esac
done
hex=$(sha256sum "$file" | cut -d' ' -f1) || exit 1
if [ -n "$bundle" ]; then
  candidates=$(jq -r '[.subject, .workflow, .ref, .runner, .predicate, .source] | @tsv' "$bundle") || { echo "fake gh: $bundle is not JSON lines" >&2; exit 1; }
else
  candidates=$(cat "$ATTESTATIONS")
fi
found=
while read -r h w r run p src; do
  [ "$h" = "$hex" ] || continue
  run=${run:-github-hosted} p=${p:-https://slsa.dev/provenance/v1} src=${src:-$r}
  san="https://github.com/$w@$r"
  [ -z "$wf" ] || [ "${san#"https://github.com/$wf"}" != "$san" ] || continue
  [ -z "$ref" ] || [ "$src" = "$ref" ] || continue
  [ -z "$deny" ] || [ "$run" = github-hosted ] || continue
  [ "$p" = "$pred" ] || continue
  # FAKE_GH_JSON_REF: a gh whose JSON is not what it verified.
  found="$found${found:+,}{\"attestation\":{\"bundle\":{\"subject\":\"$h\",\"workflow\":\"$w\",\"ref\":\"${FAKE_GH_JSON_REF:-$r}\",\"runner\":\"$run\",\"predicate\":\"$p\",\"source\":\"$src\"}}}"
done <<<"$candidates"
if [ -z "$found" ]; then
  echo "fake gh: no attestation of $file for ${wf:-any workflow} at ${ref:-any ref}${bundle:+ in $bundle}" >&2
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

// stepRunner runs a step's run: script with exactly the shell GitHub's
// runner uses for it (shellCommand), the fakes first on PATH, in dir.
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
	cmd, err := stepCommand(s, dir)
	if err != nil {
		return nil, "", err
	}
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
	err = cmd.Run()
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
	// checked is what the caller's check job built (build.yml's inputs,
	// keyed as the build's outputs); nil: the build's own digests.
	checked map[string]string
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
	for _, k := range []string{"sha256sums", "image-digest", "chart-digest"} {
		v, ok := b.checked[k]
		if !ok {
			v = build[k]
		}
		ctx["inputs.checked-"+k] = v
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
			// A look-alike workflow, which gh matches by prefix without @ref;
			// a self-hosted runner; another predicate.
			fmt.Fprintf(&store, "%s o/r/.github/workflows/build.yml-copy.yml refs/tags/%s\n", d, version)
			fmt.Fprintf(&store, "%s %s refs/tags/%s self-hosted\n%s %s refs/tags/%s github-hosted https://spdx.dev/Document/v2.3\n", d, builder, version, d, builder, version)
			// build.yml at this tag, called by a branch's workflow: its source ref is the branch.
			fmt.Fprintf(&store, "%s %s refs/tags/%s github-hosted https://slsa.dev/provenance/v1 refs/heads/elsewhere\n", d, builder, version)
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
// unless the independent rebuild made the same files and digests, and
// they are the build the caller's check job read the registry and the
// GitHub release against (build.yml's inputs).
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
	for name, checked := range map[string]map[string]string{
		"the checked build's files of other bytes": with("sha256sums", b64(other)),
		"another checked image digest":             with("image-digest", "sha256:"+strings.Repeat("3", 64)),
		"another checked chart digest":             with("chart-digest", "sha256:"+strings.Repeat("4", 64)),
		"no checked digests":                       {"sha256sums": "", "image-digest": "", "chart-digest": ""},
	} {
		b.checked = checked
		attested, log, err := b.run(t, same)
		if err == nil || len(attested) > 0 || !strings.Contains(log, "::error::") || !strings.Contains(log, "release's checks read") {
			t.Errorf("%s: attested %v, %v; want the first step to stop, naming the checks\n%s", name, attested, err, log)
		}
	}
}

// TestPublishAttachesThisTagsProvenance runs the publish job's provenance
// step for real (gh faked), under the shell GitHub uses for it: the
// .intoto.jsonl it leaves for the release holds the bundles of build.yml's
// attestations for this tag, one per subject, and none of another tag's or
// another workflow's. The step fails, so the release is not published,
// when a subject has no provenance for this tag, when what gh printed is
// not a bundle that verifies for the subject (each subject is verified
// again against the file and counted), and when SHA256SUMS cannot be read
// (under bash -e without pipefail, `cut | sed` would pass, leaving the
// two manifests as the only subjects).
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
	for _, c := range []struct {
		name    string
		missing int      // the subject without provenance for this tag, or -1
		env     []string // for the fake gh
		noSums  bool     // SHA256SUMS unreadable
		stop    string   // what the failing step says, "" for a pass
	}{
		{"every subject attested", -1, nil, false, ""},
		{"the first file without provenance", 0, nil, false, "no attestation of bin/release/THIRD_PARTY_NOTICES"},
		{"the chart without provenance", 6, nil, false, "no attestation of bin/release/chart.manifest.json"},
		{"the SBOM without provenance", 4, nil, false, "no attestation of bin/release/kubecost-s3-exporter_" + version + ".spdx.json"},
		{"gh printing bundles other than the ones it verified", -1, []string{"FAKE_GH_JSON_REF=refs/tags/v9.8.7-rc.0"}, false, "holds no verified bundle of"},
		{"SHA256SUMS unreadable", -1, nil, true, "SHA256SUMS"},
	} {
		work := t.TempDir()
		files := releaseDir(t, filepath.Join(work, "bin/release"))
		var subjects []string
		for _, line := range strings.Split(strings.TrimSpace(files["SHA256SUMS"]), "\n") {
			subjects = append(subjects, strings.Fields(line)[0])
		}
		subjects = append(subjects, hexSum(files["image.manifest.json"]), hexSum(files["chart.manifest.json"]))
		var store strings.Builder
		for i, d := range subjects {
			// Neither the release candidate's, release.yml's, a look-alike
			// workflow's nor a self-hosted runner's attestation counts.
			fmt.Fprintf(&store, "%s o/r/.github/workflows/build.yml refs/tags/v9.8.7-rc.0\n%s o/r/.github/workflows/release.yml refs/tags/%s\n", d, d, version)
			fmt.Fprintf(&store, "%s o/r/.github/workflows/build.yml refs/tags/%s self-hosted\n", d, version)
			fmt.Fprintf(&store, "%s o/r/.github/workflows/build.yml-copy.yml refs/tags/%s\n", d, version)
			fmt.Fprintf(&store, "%s o/r/.github/workflows/build.yml refs/tags/%s github-hosted https://slsa.dev/provenance/v1 refs/heads/elsewhere\n", d, version)
			fmt.Fprintf(&store, "%s o/r/.github/workflows/build.yml refs/tags/%s github-hosted https://spdx.dev/Document/v2.3\n", d, version)
			if i != c.missing {
				fmt.Fprintf(&store, "%s o/r/.github/workflows/build.yml refs/tags/%s\n", d, version)
			}
		}
		attestations := filepath.Join(work, "attestations")
		if err := os.WriteFile(attestations, []byte(store.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.noSums {
			if err := os.Remove(filepath.Join(work, "bin/release/SHA256SUMS")); err != nil {
				t.Fatal(err)
			}
		}
		_, log, err := runner.run(step, work, githubContext(), append(c.env, "ATTESTATIONS="+attestations)...)
		if c.stop != "" {
			if err == nil || !strings.Contains(log, c.stop) {
				t.Errorf("%s: the step returned %v; want a failure saying %q\n%s", c.name, err, c.stop, log)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: the step: %v\n%s", c.name, err, log)
		}
		data, err := os.ReadFile(filepath.Join(work, "bin/release/kubecost-s3-exporter_"+version+".intoto.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		got := map[string]bool{}
		for _, l := range lines {
			var b struct{ Subject, Workflow, Ref, Runner, Predicate, Source string }
			if err := json.Unmarshal([]byte(l), &b); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			if b.Workflow != "o/r/.github/workflows/build.yml" || b.Ref != "refs/tags/"+version || b.Source != b.Ref || b.Runner != "github-hosted" || b.Predicate != "https://slsa.dev/provenance/v1" {
				t.Errorf("the release's provenance holds %+v, not build.yml's SLSA provenance for %s on a GitHub-hosted runner", b, version)
			}
			got[b.Subject] = true
		}
		if len(lines) != len(subjects) || len(got) != len(subjects) {
			t.Errorf("%d bundles for %d subjects:\n%s", len(lines), len(subjects), data)
		}
		if !strings.Contains(log, fmt.Sprintf("each of the %d subjects verified against it", len(subjects))) {
			t.Errorf("the step does not report its count:\n%s", log)
		}
	}
}
