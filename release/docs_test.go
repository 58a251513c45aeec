package release_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReleaseDocsVerifyWhatIsSigned: docs/release.md tells users to verify
// every kind of signature `make sign` makes, with the file names it writes,
// against the identity of the workflow that exists.
func TestReleaseDocsVerifyWhatIsSigned(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/release.md")
	if err != nil {
		t.Fatal(err)
	}
	_, verifying, ok := strings.Cut(string(doc), "## Verifying a release")
	if !ok {
		t.Fatal("docs/release.md has no \"Verifying a release\" section")
	}
	verifying, _, _ = strings.Cut(verifying, "\n## ")
	recipe := string(mk)[strings.Index(string(mk), "\nsign:"):]
	recipe, _, _ = strings.Cut(recipe, "\n\n")
	types := regexp.MustCompile(`\b(attest|attest-blob) .*--type (\S+)`).FindAllStringSubmatch(recipe, -1)
	if len(types) < 1 {
		t.Fatalf("read %d attest commands from make sign", len(types))
	}
	for _, m := range types {
		verb := map[string]string{"attest": "verify-attestation", "attest-blob": "verify-blob-attestation"}[m[1]]
		if !regexp.MustCompile(`cosign ` + verb + `\b[^\n]*(\\\n[^\n]*)*--type ` + regexp.QuoteMeta(m[2])).MatchString(verifying) {
			t.Errorf("make sign runs cosign %s --type %s; the docs never run cosign %s --type %s", m[1], m[2], verb, m[2])
		}
	}
	bundles := regexp.MustCompile(`--bundle \S*?(SHA256SUMS\.sigstore\.json)`).FindAllStringSubmatch(recipe, -1)
	if len(bundles) == 0 {
		t.Error("make sign writes no SHA256SUMS.sigstore.json bundle")
	}
	for _, bundle := range bundles {
		if !strings.Contains(verifying, "--new-bundle-format --bundle "+bundle[1]) {
			t.Errorf("make sign writes %s; the docs never verify it as a Sigstore bundle", bundle[1])
		}
	}
	// The provenance: verified against the builder's identity (build.yml,
	// which attests), at the tag, for the image, the chart and the files.
	for _, want := range []string{"cosign verify ", "sha256sum -c SHA256SUMS",
		"https://github.com/kubecost-s3-exporter/kubecost-s3-exporter/.github/workflows/release.yml@refs/tags/$VERSION",
		"https://token.actions.githubusercontent.com",
		"gh attestation verify", "--signer-workflow kubecost-s3-exporter/kubecost-s3-exporter/.github/workflows/build.yml",
		"--source-ref refs/tags/$VERSION", "--source-digest", "--deny-self-hosted-runners", `oci://"$IMAGE:$VERSION"`, `oci://"$CHART:${VERSION#v}"`,
		"SLSA Build L2", "https://slsa.dev/provenance/v1",
		// Offline, from the release assets.
		`--bundle "kubecost-s3-exporter_$VERSION.intoto.jsonl"`, "--custom-trusted-root", "### Checking the first tagged release"} {
		if !strings.Contains(verifying, want) {
			t.Errorf("the verification section lacks %q", want)
		}
	}
	// The level: L2 claimed, L3 only with what raises it, said exactly.
	_, level, ok := strings.Cut(string(doc), "### The level it reaches")
	level, _, _ = strings.Cut(level, "\n## ")
	for _, want := range []string{"SLSA v1.0 Build Level 2", "Build L3", "ruleset", "`.github/workflows/**`", "another repository",
		"--signer-workflow", "--source-ref", "--source-digest"} {
		if !ok || !strings.Contains(level, want) {
			t.Errorf("the level section lacks %q", want)
		}
	}
	if regexp.MustCompile(`(?i)gives \*\*SLSA Build L3|SLSA Build L3\*\*|: SLSA Build L3`).MatchString(string(doc)) {
		t.Error("docs/release.md claims SLSA Build L3")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(readme), ": SLSA Build L3") || !strings.Contains(string(readme), "SLSA Build L2") {
		t.Error("the README's release paragraph must say SLSA Build L2, not L3")
	}
	// The assets a scanner and an offline verifier look for.
	for _, want := range []string{"SHA256SUMS.sigstore.json", ".intoto.jsonl", "make release-publish"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/release.md never names %q", want)
		}
	}
	for _, wf := range []string{"release.yml", "build.yml"} {
		if _, err := os.Stat("../.github/workflows/" + wf); err != nil {
			t.Errorf("the identity names a workflow that does not exist: %v", err)
		}
	}
	if !strings.Contains(string(doc), "actions/attest") || !strings.Contains(string(doc), "attestations: write") {
		t.Error("docs/release.md does not say which action attests with which permission")
	}
	if !strings.Contains(string(doc), "make bump-base") || !makeTargets(t)["bump-base"] {
		t.Error("docs/release.md and the Makefile must both have make bump-base")
	}
}
