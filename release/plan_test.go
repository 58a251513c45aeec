package release_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// published is what a release holds in the dry run of the publish job: the
// registry's facts and the GitHub release's assets (the attested digests
// are TestBuilderDryRun's).
type published struct {
	image, sbom, imageSig, sbomAtt, chart, chartSig, release bool
	assets                                                   map[string]bool
}

func (p published) stateLines(files map[string]string) string {
	var b strings.Builder
	for _, kv := range []struct {
		k string
		v bool
	}{{"image", p.image}, {"image-sbom", p.sbom}, {"image-signature", p.imageSig}, {"sbom-attestation", p.sbomAtt},
		{"chart", p.chart}, {"chart-signature", p.chartSig}, {"release", p.release}} {
		fmt.Fprintf(&b, "%s=%s\n", kv.k, map[bool]string{true: "present", false: "absent"}[kv.v])
	}
	for name := range p.assets {
		size, sum := "1", "-"
		if data, ok := files[name]; ok {
			s := sha256.Sum256([]byte(data))
			size, sum = fmt.Sprint(len(data)), hex.EncodeToString(s[:])
		}
		fmt.Fprintf(&b, "asset %s %s %s\n", name, size, sum)
	}
	return b.String()
}

// workflowStep is a step of the publish or attest job, as the dry run
// reads it from the workflow file.
type workflowStep struct {
	Name, If, Run, Uses string
	Env                 map[string]string
	With                map[string]string
}

func jobSteps(t *testing.T, file, job string) []workflowStep {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct{ Steps []workflowStep }
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	steps := wf.Jobs[job].Steps
	if len(steps) == 0 {
		t.Fatalf("%s has no job %s", file, job)
	}
	return steps
}

var condition = regexp.MustCompile(`^(?:steps\.plan|needs\.build)\.outputs\.([a-z-]+) (==|!=) '([^']*)'$`)

// enabled evaluates a step's if: against the plan's outputs. Only the two
// forms the release uses are understood; anything else fails the test, so
// a new condition is modelled before it ships.
func enabled(t *testing.T, s workflowStep, out map[string]string) bool {
	if s.If == "" {
		return true
	}
	m := condition.FindStringSubmatch(strings.TrimSpace(s.If))
	if m == nil {
		t.Fatalf("step %q: condition %q is not one the dry run models", s.Name, s.If)
	}
	if _, ok := out[m[1]]; !ok {
		t.Fatalf("step %q: the plan has no output %s", s.Name, m[1])
	}
	return (out[m[1]] == m[3]) == (m[2] == "==")
}

// expand replaces ${{ steps.plan.outputs.X }} and ${{ needs.build.outputs.X }}.
func expand(s string, out map[string]string) string {
	return regexp.MustCompile(`\$\{\{\s*(?:steps\.plan|needs\.build)\.outputs\.([a-z-]+)\s*\}\}`).ReplaceAllStringFunc(s, func(m string) string {
		return out[regexp.MustCompile(`outputs\.([a-z-]+)`).FindStringSubmatch(m)[1]]
	})
}

// releaseDir is what `make release-build` leaves, with made-up bytes.
func releaseDir(t *testing.T) (string, map[string]string) {
	dir := t.TempDir()
	files := map[string]string{
		"THIRD_PARTY_NOTICES": "notices", "kubecost-s3-exporter_linux_amd64": "amd64", "kubecost-s3-exporter_linux_arm64": "arm64",
		"kubecost-s3-exporter_" + version + ".spdx.json": "{}", "kubecost-s3-exporter-" + chartVersion + ".tgz": "tgz",
	}
	var sums strings.Builder
	for _, n := range sortedKeys(files) {
		s := sha256.Sum256([]byte(files[n]))
		fmt.Fprintf(&sums, "%x  %s\n", s, n)
	}
	files["SHA256SUMS"] = sums.String()
	files["image.digest"] = "sha256:" + strings.Repeat("1", 64) + "\n"
	files["chart.digest"] = "sha256:" + strings.Repeat("2", 64) + "\n"
	for n, data := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, files
}

// plan runs kse-release as the workflow's plan step does and returns its
// outputs.
func plan(t *testing.T, bin, dir, scope, state string) (map[string]string, error) {
	path := filepath.Join(dir, scope+".state")
	if err := os.WriteFile(path, []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-dir", dir, "-state", path, "-scope", scope).Output()
	if err != nil {
		return nil, err
	}
	outputs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("output line %q", line)
		}
		outputs[k] = v
	}
	return outputs, nil
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
// image, SBOM, signatures, chart, the release, each release file), the plan
// step's real command decides, the job's steps run or not by their own if:
// conditions, and each step that runs changes the state as its command
// would. After one run everything is published, and no step wrote
// something that was there.
func TestReleaseWorkflowDryRun(t *testing.T) {
	bin := buildKseRelease(t)
	dir, files := releaseDir(t)
	steps := jobSteps(t, "../.github/workflows/release.yml", "publish")
	assets := []string{"SHA256SUMS", "SHA256SUMS.cosign.bundle", "THIRD_PARTY_NOTICES", "kubecost-s3-exporter_linux_amd64",
		"kubecost-s3-exporter_linux_arm64", "kubecost-s3-exporter_" + version + ".spdx.json", "kubecost-s3-exporter-" + chartVersion + ".tgz"}
	runs := 0
	for bits := 0; bits < 1<<7; bits++ {
		base := published{image: bits&1 != 0, sbom: bits&2 != 0, imageSig: bits&4 != 0, sbomAtt: bits&8 != 0,
			chart: bits&16 != 0, chartSig: bits&32 != 0, release: bits&64 != 0}
		// Signatures exist only of what was pushed.
		if (!base.image && base.imageSig) || (!base.image && base.sbomAtt) || (!base.chart && base.chartSig) {
			continue
		}
		variants := [][]string{nil}
		if base.release {
			variants = append(variants, assets)
			for i := range assets {
				variants = append(variants, slices.Delete(slices.Clone(assets), i, i+1))
			}
		}
		for _, have := range variants {
			st := base
			st.assets = map[string]bool{}
			for _, a := range have {
				st.assets[a] = true
			}
			runPublish(t, bin, dir, files, steps, st, assets)
			runs++
		}
	}
	t.Logf("%d partial states, each completed by one run with nothing written twice", runs)

	t.Run("a release file with other bytes stops the run", func(t *testing.T) {
		st := "image=present\nimage-sbom=present\nimage-signature=present\nsbom-attestation=present\nchart=present\nchart-signature=present\nrelease=present\n" +
			"asset THIRD_PARTY_NOTICES 7 " + strings.Repeat("0", 64) + "\n"
		if _, err := plan(t, bin, dir, "publish", st); err == nil {
			t.Error("the plan accepted a release file with other bytes")
		}
	})
	t.Run("a state with a check missing stops the run", func(t *testing.T) {
		if _, err := plan(t, bin, dir, "publish", "image=present\n"); err == nil {
			t.Error("the plan read a missing chart check as absent")
		}
	})
}

// runPublish is one dry run of the publish job from state st.
func runPublish(t *testing.T, bin, dir string, files map[string]string, steps []workflowStep, st published, assets []string) {
	t.Helper()
	out, err := plan(t, bin, dir, "publish", st.stateLines(files))
	if err != nil {
		t.Fatalf("state %+v: the plan failed: %v", st, err)
	}
	dup := func(what string, there bool) {
		if there {
			t.Errorf("state %+v: the run writes %s, which is there", st, what)
		}
	}
	signed := false
	for _, s := range steps {
		if !enabled(t, s, out) {
			continue
		}
		env := map[string]string{}
		for k, v := range s.Env {
			env[k] = expand(v, out)
		}
		switch {
		case strings.Contains(s.Run, "make image-push"):
			dup("the image and its SBOM", st.image && st.sbom)
			st.image, st.sbom = true, true
		case strings.Contains(s.Run, "make chart-push"):
			dup("the chart", st.chart)
			st.chart = true
		case strings.Contains(s.Run, "make sign"):
			for _, part := range strings.Fields(env["SIGN"]) {
				st, signed = signPart(t, st, part), signed || part == "sums"
			}
		case strings.Contains(s.Run, "gh release create"):
			dup("the GitHub release", st.release)
			st.release = true
		case strings.Contains(s.Run, "gh release upload"):
			if !st.release {
				t.Fatalf("state %+v: uploads before the release exists", st)
			}
			for _, path := range strings.Fields(env["UPLOAD"]) {
				name := filepath.Base(path)
				dup("release file "+name, st.assets[name])
				if name == "SHA256SUMS.cosign.bundle" && !signed {
					t.Errorf("state %+v: uploads a signature bundle this run did not make", st)
				}
				st.assets[name] = true
			}
		}
	}
	complete := st.image && st.sbom && st.imageSig && st.sbomAtt && st.chart && st.chartSig && st.release
	for _, a := range assets {
		complete = complete && st.assets[a]
	}
	if !complete {
		t.Errorf("after one run from that state: %+v, not everything", st)
	}
}

// signPart is what `make sign SIGN=part` adds; signing what is not pushed,
// or signed, fails the dry run.
func signPart(t *testing.T, st published, part string) published {
	t.Helper()
	twice := map[string]bool{"image": st.imageSig, "sbom": st.sbomAtt, "chart": st.chartSig}[part]
	pushed := map[string]bool{"image": st.image, "sbom": st.image, "chart": st.chart, "sums": true}[part]
	if twice || !pushed {
		t.Errorf("state %+v: make sign %s (signed already %v, pushed %v)", st, part, twice, pushed)
	}
	switch part {
	case "image":
		st.imageSig = true
	case "sbom":
		st.sbomAtt = true
	case "chart":
		st.chartSig = true
	case "sums":
	default:
		t.Fatalf("make sign has no part %q", part)
	}
	return st
}

// TestBuilderDryRun runs the attest job of build.yml without the network:
// for every subset of the subjects (each release file, the index, the
// chart) that has provenance already, the plan and the steps' if:
// conditions attest exactly the others, once.
func TestBuilderDryRun(t *testing.T) {
	bin := buildKseRelease(t)
	dir, files := releaseDir(t)
	steps := jobSteps(t, "../.github/workflows/build.yml", "attest")
	var subjects []string // digests, hex
	for _, line := range strings.Split(strings.TrimSpace(files["SHA256SUMS"]), "\n") {
		subjects = append(subjects, strings.Fields(line)[0])
	}
	image, chart := strings.Repeat("1", 64), strings.Repeat("2", 64)
	subjects = append(subjects, image, chart)
	for bits := 0; bits < 1<<len(subjects); bits++ {
		have := map[string]bool{}
		var state strings.Builder
		for i, d := range subjects {
			if bits&(1<<i) != 0 {
				have[d] = true
				fmt.Fprintf(&state, "provenance %s\n", d)
			}
		}
		out, err := plan(t, bin, dir, "provenance", state.String())
		if err != nil {
			t.Fatal(err)
		}
		sums, err := os.ReadFile(filepath.Join(dir, "provenance.sha256"))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			if s.Uses == "" || !enabled(t, s, out) {
				continue
			}
			var attested []string
			switch {
			case s.With["subject-checksums"] != "":
				for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
					attested = append(attested, strings.Fields(line)[0])
				}
			case strings.Contains(s.With["subject-digest"], "image-digest"):
				attested = []string{image}
			case strings.Contains(s.With["subject-digest"], "chart-digest"):
				attested = []string{chart}
			default:
				t.Fatalf("step %q attests a subject the dry run does not know", s.Name)
			}
			for _, d := range attested {
				if have[d] {
					t.Errorf("provenance state %b: %s attested twice", bits, d)
				}
				have[d] = true
			}
		}
		for _, d := range subjects {
			if !have[d] {
				t.Errorf("provenance state %b: %s left without provenance", bits, d)
			}
		}
	}
}
