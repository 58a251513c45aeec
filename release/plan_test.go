package release_test

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// published is what the registry holds in the dry run of the publish job,
// by content: the tags name this build, the signatures verify under
// release.yml's identity; and whether the GitHub release's bundle
// verifies. The GitHub release's assets are TestReleaseContent's.
type published struct {
	image, sbom, imageSig, sbomAtt, chart, chartSig, sumsSig bool
}

func (p published) stateLines() string {
	var b strings.Builder
	for _, kv := range []struct {
		k string
		v bool
	}{{"image", p.image}, {"image-sbom", p.sbom}, {"image-signature", p.imageSig}, {"sbom-attestation", p.sbomAtt},
		{"chart", p.chart}, {"chart-signature", p.chartSig}, {"sums-signature", p.sumsSig}} {
		fmt.Fprintf(&b, "%s=%s\n", kv.k, map[bool]string{true: "present", false: "absent"}[kv.v])
	}
	return b.String()
}

// workflowStep is a step of a job, as the dry run reads it from the
// workflow file. Shell is the step's shell: key, or else the job's or the
// workflow's defaults.run.shell, as GitHub resolves it ("" when none
// says: GitHub's default).
type workflowStep struct {
	Name, If, Run, Uses, Shell string
	Env                        map[string]string
	With                       map[string]string
}

type runDefaults struct {
	Run struct{ Shell string } `json:"run"`
}

func jobSteps(t *testing.T, file, job string) []workflowStep {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := parseJobSteps(data, job)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return steps
}

func parseJobSteps(data []byte, job string) ([]workflowStep, error) {
	var wf struct {
		Defaults runDefaults `json:"defaults"`
		Jobs     map[string]struct {
			Defaults runDefaults `json:"defaults"`
			Steps    []workflowStep
		}
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		return nil, err
	}
	steps := wf.Jobs[job].Steps
	if len(steps) == 0 {
		return nil, fmt.Errorf("no job %s", job)
	}
	// The most specific default wins: the step's shell:, the job's, the
	// workflow's (GitHub's "defaults.run" and "jobs.<job_id>.defaults.run").
	for i := range steps {
		if steps[i].Run != "" && steps[i].Shell == "" {
			steps[i].Shell = cmp.Or(wf.Jobs[job].Defaults.Run.Shell, wf.Defaults.Run.Shell)
		}
	}
	return steps, nil
}

var condition = regexp.MustCompile(`^(?:steps\.plan|needs\.build)\.outputs\.([a-z-]+) (==|!=) '([^']*)'$`)

// enabled evaluates a step's if: against the plan's outputs. Only the two
// forms the release uses are understood; anything else is an error, so a
// new condition is modelled before it ships.
func enabled(s workflowStep, out map[string]string) (bool, error) {
	if s.If == "" {
		return true, nil
	}
	m := condition.FindStringSubmatch(strings.TrimSpace(s.If))
	if m == nil {
		return false, fmt.Errorf("step %q: condition %q is not one the dry run models", s.Name, s.If)
	}
	if _, ok := out[m[1]]; !ok {
		return false, fmt.Errorf("step %q: the plan has no output %s", s.Name, m[1])
	}
	return (out[m[1]] == m[3]) == (m[2] == "=="), nil
}

var expression = regexp.MustCompile(`\$\{\{\s*([a-zA-Z0-9._-]+)\s*\}\}`)

// expand replaces the expressions the release's steps use: the outputs of
// the plan step and of the build jobs (ctx["build.X"], ctx["rebuild.X"],
// ctx["plan.X"]), and the github context. An unknown one is an error.
func expand(s string, ctx map[string]string) (string, error) {
	var bad error
	out := expression.ReplaceAllStringFunc(s, func(m string) string {
		e := expression.FindStringSubmatch(m)[1]
		key := e
		for _, p := range []struct{ prefix, to string }{{"steps.plan.outputs.", "plan."}, {"needs.build.outputs.", "build."},
			{"needs.rebuild.outputs.", "rebuild."}} {
			if strings.HasPrefix(e, p.prefix) {
				key = p.to + strings.TrimPrefix(e, p.prefix)
			}
		}
		v, ok := ctx[key]
		if !ok {
			bad = fmt.Errorf("expression %s is not modelled", e)
		}
		return v
	})
	return out, bad
}

// githubContext is the part of the github context the steps read.
func githubContext() map[string]string {
	return map[string]string{"github.repository": "o/r", "github.token": "token", "secrets.GITHUB_TOKEN": "token",
		"github.ref_name": version, "github.ref": "refs/tags/" + version, "github.actor": "someone"}
}

// releaseDir is what `make release-build` leaves, with made-up bytes; the
// two manifests' SHA-256 are the image and chart digests, as kse-image and
// kse-chart write them.
func releaseDir(t *testing.T, dir string) map[string]string {
	files := map[string]string{
		"THIRD_PARTY_NOTICES": "notices", "kubecost-s3-exporter_linux_amd64": "amd64", "kubecost-s3-exporter_linux_arm64": "arm64",
		"kubecost-s3-exporter_" + version + ".spdx.json": "{}", "kubecost-s3-exporter-" + chartVersion + ".tgz": "tgz",
		"image.manifest.json": `{"index":1}`, "chart.manifest.json": `{"chart":1}`,
	}
	var sums strings.Builder
	for _, n := range sortedKeys(files) {
		if !strings.HasSuffix(n, ".manifest.json") {
			fmt.Fprintf(&sums, "%s  %s\n", hexSum(files[n]), n)
		}
	}
	files["SHA256SUMS"] = sums.String()
	files["image.digest"] = "sha256:" + hexSum(files["image.manifest.json"]) + "\n"
	files["chart.digest"] = "sha256:" + hexSum(files["chart.manifest.json"]) + "\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, data := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

func hexSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// plan runs kse-release as the workflow's plan step does and returns its
// outputs.
func plan(t *testing.T, bin, dir, scope, state string) (map[string]string, error) {
	path := filepath.Join(dir, scope+".state")
	if err := os.WriteFile(path, []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "plan", "-dir", dir, "-state", path, "-scope", scope).Output()
	if err != nil {
		return nil, err
	}
	return outputLines(t, string(out)), nil
}

func outputLines(t *testing.T, s string) map[string]string {
	outputs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("output line %q", line)
		}
		outputs[k] = v
	}
	return outputs
}

func buildKseRelease(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "kse-release")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/kse-release").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestReleaseWorkflowDryRun runs the publish job of release.yml without
// the network: for every partial state a failed run can leave (each of
// image, SBOM, the three signatures, chart, the GitHub release's
// signature bundle), the plan step's real command decides, the job's steps
// run or not by their own if: conditions, and each step that runs changes
// the state as its command would. After one run everything is published,
// nothing was signed twice or before it was pushed, and the GitHub release
// is published by the last step, after every signature.
func TestReleaseWorkflowDryRun(t *testing.T) {
	bin := buildKseRelease(t)
	dir := t.TempDir()
	releaseDir(t, dir)
	steps := jobSteps(t, workflowPath("release.yml"), "publish")
	runs := 0
	for bits := 0; bits < 1<<7; bits++ {
		st := published{image: bits&1 != 0, sbom: bits&2 != 0, imageSig: bits&4 != 0, sbomAtt: bits&8 != 0,
			chart: bits&16 != 0, chartSig: bits&32 != 0, sumsSig: bits&64 != 0}
		// Signatures verify only of what was pushed.
		if (!st.image && st.imageSig) || (!st.image && st.sbomAtt) || (!st.chart && st.chartSig) {
			continue
		}
		if err := runPublish(t, bin, dir, steps, st); err != nil {
			t.Errorf("state %+v: %v", st, err)
		}
		runs++
	}
	t.Logf("%d partial states, each completed by one run with nothing signed twice", runs)

	t.Run("a state with a check missing stops the run", func(t *testing.T) {
		if _, err := plan(t, bin, dir, "publish", "image=present\n"); err == nil {
			t.Error("the plan read a missing chart check as absent")
		}
	})
}

// runPublish is one dry run of the publish job from state st.
func runPublish(t *testing.T, bin, dir string, steps []workflowStep, st published) error {
	t.Helper()
	out, err := plan(t, bin, dir, "publish", st.stateLines())
	if err != nil {
		return fmt.Errorf("the plan failed: %v", err)
	}
	ctx := githubContext()
	for k, v := range out {
		ctx["plan."+k] = v
	}
	for _, k := range []string{"sha256sums", "image-digest", "chart-digest"} {
		ctx["build."+k] = "from the build job" // the rebuild step compares; not modelled here
	}
	var provenance, released bool
	signedSums := false
	for _, s := range steps {
		on, err := enabled(s, out)
		if err != nil {
			return err
		}
		if !on {
			continue
		}
		env := map[string]string{}
		for k, v := range s.Env {
			if env[k], err = expand(v, ctx); err != nil {
				return err
			}
		}
		if released {
			return fmt.Errorf("step %q runs after the GitHub release was published", s.Name)
		}
		switch {
		case strings.Contains(s.Run, "make image-push"):
			if st.image && st.sbom {
				return fmt.Errorf("pushes the image and its SBOM, which are there")
			}
			st.image, st.sbom = true, true
		case strings.Contains(s.Run, "make chart-push"):
			if st.chart {
				return fmt.Errorf("pushes the chart, which is there")
			}
			st.chart = true
		case strings.Contains(s.Run, "make sign"):
			for _, part := range strings.Fields(env["SIGN"]) {
				if st, err = signPart(st, part); err != nil {
					return err
				}
				signedSums = signedSums || part == "sums"
			}
		case strings.Contains(s.Run, "gh attestation verify"):
			provenance = true
		case strings.Contains(s.Run, "make release-publish"):
			if !st.sumsSig && !signedSums {
				return fmt.Errorf("publishes the GitHub release with no verified signature bundle")
			}
			if !provenance || !strings.Contains(s.Run, "intoto.jsonl") {
				return fmt.Errorf("publishes the GitHub release without the provenance bundles")
			}
			released = true
		}
	}
	if !(st.image && st.sbom && st.imageSig && st.sbomAtt && st.chart && st.chartSig && released) {
		return fmt.Errorf("after one run: %+v, released %v: not everything", st, released)
	}
	return nil
}

// signPart is what `make sign SIGN=part` adds; signing what is not pushed,
// or signed, is an error.
func signPart(st published, part string) (published, error) {
	twice := map[string]bool{"image": st.imageSig, "sbom": st.sbomAtt, "chart": st.chartSig, "sums": st.sumsSig}[part]
	pushed := map[string]bool{"image": st.image, "sbom": st.image, "chart": st.chart, "sums": true}[part]
	if twice || !pushed {
		return st, fmt.Errorf("make sign %s (signed already %v, pushed %v)", part, twice, pushed)
	}
	switch part {
	case "image":
		st.imageSig = true
	case "sbom":
		st.sbomAtt = true
	case "chart":
		st.chartSig = true
	case "sums":
		st.sumsSig = true
	default:
		return st, fmt.Errorf("make sign has no part %q", part)
	}
	return st, nil
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
