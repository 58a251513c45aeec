package spdxcheck

import (
	"strings"
	"testing"
)

const minimal = `{"spdxVersion":"SPDX-2.3","dataLicense":"CC0-1.0","SPDXID":"SPDXRef-DOCUMENT","name":"x",
"documentNamespace":"https://example.com/x","creationInfo":{"created":"2024-01-01T00:00:00Z","creators":["Tool: t"]},
"packages":[{"SPDXID":"SPDXRef-P","name":"p","downloadLocation":"NOASSERTION","filesAnalyzed":false%s}]}`

// TestValidateCatches: the schema passes a minimal document and fails the
// mistakes an SBOM writer makes, so a passing SBOM check means something.
func TestValidateCatches(t *testing.T) {
	if err := Validate([]byte(strings.Replace(minimal, "%s", "", 1))); err != nil {
		t.Fatalf("a minimal valid document: %v", err)
	}
	for name, extra := range map[string]string{
		"checksum algorithm outside the enum":    `,"checksums":[{"algorithm":"SHA-256","checksumValue":"ab"}]`,
		"external ref category outside the enum": `,"externalRefs":[{"referenceCategory":"PURL","referenceType":"purl","referenceLocator":"pkg:golang/x@v1"}]`,
		"purpose outside the enum":               `,"primaryPackagePurpose":"BINARY"`,
		"filesAnalyzed not a boolean":            `,"filesAnalyzed":"no"`,
	} {
		if err := Validate([]byte(strings.Replace(minimal, "%s", extra, 1))); err == nil {
			t.Errorf("%s: the schema accepted it", name)
		}
	}
	if err := Validate([]byte(`{"spdxVersion":"SPDX-2.3"}`)); err == nil {
		t.Error("a document without the required fields passed")
	}
}
