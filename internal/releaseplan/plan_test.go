package releaseplan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func want() Want {
	return Want{
		Files: map[string]File{
			"SHA256SUMS": {SHA256: "aa", Size: 10}, "bin": {SHA256: "bb", Size: 20}, "THIRD_PARTY_NOTICES": {SHA256: "cc", Size: 30},
		},
		ImageDigest: "sha256:11", ChartDigest: "sha256:22",
	}
}

// TestDecideNothingLeft: a release with everything gives an empty plan.
func TestDecideNothingLeft(t *testing.T) {
	st := State{Image: true, ImageSBOM: true, ImageSignature: true, SBOMAttestation: true, Chart: true, ChartSignature: true, SumsSignature: true,
		Provenance: map[string]bool{"bb": true, "cc": true, "11": true, "22": true}}
	p, err := Decide(want(), st)
	if err != nil || !p.Nothing() {
		t.Errorf("plan %+v, %v; want nothing", p, err)
	}
}

// TestDecideFromScratch: a release with nothing gets everything, and no
// provenance asked for SHA256SUMS itself.
func TestDecideFromScratch(t *testing.T) {
	p, err := Decide(want(), State{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.ImagePush || !p.ChartPush || !slices.Equal(p.Sign, []string{"image", "sbom", "chart", "sums"}) ||
		!slices.Equal(p.ProvenanceFiles, []string{"THIRD_PARTY_NOTICES", "bin"}) || !p.ProvenanceImage || !p.ProvenanceChart {
		t.Errorf("plan %+v", p)
	}
	pub, _ := p.Scope("publish")
	prov, _ := p.Scope("provenance")
	if pub.ProvenanceImage || len(pub.ProvenanceFiles) > 0 || prov.ImagePush || len(prov.Sign) > 0 {
		t.Errorf("scopes leak: publish %+v, provenance %+v", pub, prov)
	}
}

// TestDecideProvenanceByDigestOfTheTag: a subject counts as attested only
// when its digest is among the lines the workflow wrote for this tag.
func TestDecideProvenanceByDigestOfTheTag(t *testing.T) {
	p, err := Decide(want(), State{Provenance: map[string]bool{"cc": true, "22": true}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.ProvenanceFiles, []string{"bin"}) || !p.ProvenanceImage || p.ProvenanceChart {
		t.Errorf("plan %+v", p)
	}
}

func TestParseState(t *testing.T) {
	st, err := ParseState([]byte("image=present\nimage-sbom=absent\nimage-signature=absent\nsbom-attestation=absent\n"+
		"chart=present\nchart-signature=present\nrelease=draft\nrelease-immutable=false\nsums-signature=present\nprovenance sha256:11\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Image || st.ImageSBOM || !st.ChartSignature || !st.SumsSignature || !st.Provenance["11"] {
		t.Errorf("state %+v", st)
	}
	for _, bad := range []string{"image=maybe\n", "imag=present\n", "asset x 1 -\n", "hello\n"} {
		if _, err := ParseState([]byte(bad), false); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := ParseState([]byte("image=present\n"), true); err == nil || !strings.Contains(err.Error(), "did not run") {
		t.Errorf("a state without the chart's check: %v", err)
	}
}

// TestLoadWant: the files must be what SHA256SUMS says.
func TestLoadWant(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "x")
	write("SHA256SUMS", "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881  a\n")
	write("image.digest", "sha256:11\n")
	write("chart.digest", "sha256:22\n")
	w, err := LoadWant(dir)
	if err != nil || w.Files["a"].Size != 1 || w.ImageDigest != "sha256:11" || len(w.Files) != 2 {
		t.Errorf("want %+v, %v", w, err)
	}
	write("a", "y")
	if _, err := LoadWant(dir); err == nil {
		t.Error("a file other than SHA256SUMS says was accepted")
	}
}

// tagCases are release tags and not (SemVer 2.0.0 with a v, no build
// metadata): true for a release tag; release/tag_test.go runs the
// workflow's check on the same table.
var tagCases = map[string]bool{
	"v1.2.3": true, "v0.1.0": true, "v10.20.30": true, "v1.2.3-rc.1": true, "v1.2.3-beta": true, "v10.0.0-0": true,
	"v1.0.0-alpha.beta.1": true, "v1.0.0-x-y-z.--": true, "v1.0.0-0A.is.legal": true,
	"v1.2.3rc1": false, "v1.2.3.4": false, "1.2.3": false, "V1.2.3": false, "v1.2": false, "v01.2.3": false, "v1.02.3": false,
	"v1.2.03": false, "v1.2.3-": false, "v1.2.3-rc..1": false, "v1.2.3-01": false, "v1.2.3-rc.01": false, "v1.2.3+build.5": false,
	"v1.2.3-rc.1+b": false, "v1.2.3-rc_1": false, "v1.2.3 ": false, "v1.2.3\n": false, "": false, "v1.2.3-é": false,
}

func TestCheckTag(t *testing.T) {
	for tag, ok := range tagCases {
		if err := CheckTag(tag); (err == nil) != ok {
			t.Errorf("CheckTag(%q) = %v, want a release tag %v", tag, err, ok)
		}
	}
	if err := CheckTag("v1.2.3rc1"); err == nil || !strings.Contains(err.Error(), "vMAJOR.MINOR.PATCH-PRERELEASE") {
		t.Errorf("the refusal does not say what a tag is: %v", err)
	}
}

func TestPrerelease(t *testing.T) {
	for tag, want := range map[string]bool{"v1.2.3": false, "v1.2.3-rc.1": true, "v1.2.3-beta": true, "v10.0.0-0": true,
		"v1.0.0-alpha.beta.1": true, "v2.0.0-x-y": true, "v1.2.3rc1": false} {
		if Prerelease(tag) != want {
			t.Errorf("Prerelease(%q) = %v", tag, !want)
		}
	}
}
