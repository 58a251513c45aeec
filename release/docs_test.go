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
	for _, bundle := range regexp.MustCompile(`--bundle \S*?((?:\.intoto)?\.cosign\.bundle|SHA256SUMS\.cosign\.bundle)`).FindAllStringSubmatch(recipe, -1) {
		if !strings.Contains(verifying, bundle[1]) {
			t.Errorf("make sign writes *%s; the docs never verify it", bundle[1])
		}
	}
	// The provenance: verified against the builder's identity (build.yml,
	// which attests), at the tag, for the image, the chart and the files.
	for _, want := range []string{"cosign verify ", "sha256sum -c SHA256SUMS",
		"https://github.com/kubecost-s3-exporter/kubecost-s3-exporter/.github/workflows/release.yml@refs/tags/$VERSION",
		"https://token.actions.githubusercontent.com",
		"gh attestation verify", "--signer-workflow kubecost-s3-exporter/kubecost-s3-exporter/.github/workflows/build.yml",
		"--source-ref refs/tags/$VERSION", "--deny-self-hosted-runners", `oci://"$IMAGE:$VERSION"`, `oci://"$CHART:${VERSION#v}"`,
		"SLSA Build L3", "https://slsa.dev/provenance/v1"} {
		if !strings.Contains(verifying, want) {
			t.Errorf("the verification section lacks %q", want)
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
