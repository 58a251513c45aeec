// Package releaseplan decides what a run of the release workflow publishes:
// exactly what the registry and the GitHub release do not hold yet. A
// release run can stop anywhere (a registry hiccup after the image push, a
// failed upload after `gh release create`); the next run of the same tag
// must then complete it, one artifact at a time, without writing anything
// twice and without replacing anything that is there with other bytes.
//
// The facts come from the network (kse-image -check, kse-chart -check, the
// GitHub API), written as lines by the workflow; the decision is this
// package's and takes none, so every partial state is tested offline
// (release/plan_test.go runs it against the workflow's own steps).
//
// It is release tooling, used by cmd/kse-release; the exporter never links it.
package releaseplan

import (
	"fmt"
	"slices"
)

// SumsFile and BundleFile are the checksums of the release files and
// cosign's signature of them, a Sigstore bundle (the name OpenSSF
// Scorecard's Signed-Releases check and Sigstore verifiers look for),
// release files themselves.
const (
	SumsFile   = "SHA256SUMS"
	BundleFile = "SHA256SUMS.sigstore.json"
)

// Want is what this build is: every release file but the signature bundle
// (name -> SHA-256 hex and size, SHA256SUMS included), the image index and
// chart manifest digests.
type Want struct {
	Files       map[string]File
	ImageDigest string // sha256:...
	ChartDigest string // sha256:...
}

// File is one release file.
type File struct {
	SHA256 string
	Size   int64
}

// State is what is published already, by content: the tags name this
// build's digests (kse-image -check, kse-chart -check), the signatures and
// the attestation verify under the release workflow's identity, the
// GitHub release's signature bundle verifies against this build's
// SHA256SUMS (kse-release registry-state, github-state).
type State struct {
	Image, ImageSBOM, ImageSignature, SBOMAttestation bool
	Chart, ChartSignature                             bool
	SumsSignature                                     bool
	// Provenance holds the digests (hex) that have a provenance
	// attestation by build.yml for this tag (gh attestation verify
	// --signer-workflow --source-ref).
	Provenance map[string]bool
}

// Plan is what to do, in the workflow's order.
type Plan struct {
	// ProvenanceFiles are the release files (SHA256SUMS names) without
	// provenance; ProvenanceImage and ProvenanceChart the index and chart.
	ProvenanceFiles                  []string
	ProvenanceImage, ProvenanceChart bool

	ImagePush, ChartPush bool
	// Sign lists the parts of `make sign` to run: image, sbom, chart, sums.
	// The GitHub release itself is `kse-release publish`'s (release.go).
	Sign []string
}

// Nothing says whether the plan publishes nothing.
func (p Plan) Nothing() bool {
	return len(p.ProvenanceFiles) == 0 && !p.ProvenanceImage && !p.ProvenanceChart && !p.ImagePush &&
		!p.ChartPush && len(p.Sign) == 0
}

// Decide returns what is missing. SHA256SUMS needs no provenance of its
// own: it names the files that have one.
func Decide(want Want, st State) (Plan, error) {
	var p Plan
	if want.ImageDigest == "" || want.ChartDigest == "" || len(want.Files) == 0 {
		return p, fmt.Errorf("releaseplan: the build left no image digest, chart digest or files")
	}
	for _, name := range sortedNames(want.Files) {
		f := want.Files[name]
		if name != SumsFile && !st.Provenance[f.SHA256] {
			p.ProvenanceFiles = append(p.ProvenanceFiles, name)
		}
	}
	p.ProvenanceImage = !st.Provenance[hexOf(want.ImageDigest)]
	p.ProvenanceChart = !st.Provenance[hexOf(want.ChartDigest)]

	// The push of the index also attaches its SBOM, and skips the tag when
	// it is there: one step for both.
	p.ImagePush = !st.Image || !st.ImageSBOM
	p.ChartPush = !st.Chart
	for _, part := range []struct {
		name string
		done bool
	}{{"image", st.ImageSignature}, {"sbom", st.SBOMAttestation}, {"chart", st.ChartSignature}, {"sums", st.SumsSignature}} {
		if !part.done {
			p.Sign = append(p.Sign, part.name)
		}
	}
	return p, nil
}

func sortedNames(files map[string]File) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func hexOf(digest string) string {
	if len(digest) > 7 && digest[:7] == "sha256:" {
		return digest[7:]
	}
	return digest
}

// Scope keeps the part of the plan one job carries out: "provenance" for
// the builder (which alone may attest), "publish" for the job that pushes,
// signs and uploads. The other part is cleared, so Nothing speaks for the
// job.
func (p Plan) Scope(scope string) (Plan, error) {
	switch scope {
	case "provenance":
		return Plan{ProvenanceFiles: p.ProvenanceFiles, ProvenanceImage: p.ProvenanceImage, ProvenanceChart: p.ProvenanceChart}, nil
	case "publish":
		p.ProvenanceFiles, p.ProvenanceImage, p.ProvenanceChart = nil, false, false
		return p, nil
	}
	return p, fmt.Errorf("releaseplan: scope %q: want provenance or publish", scope)
}
