package imagebuild

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TestSBOMManifest: the SBOM is an OCI 1.1 artifact, with the empty config
// descriptor (the two bytes "{}") and artifactType naming SPDX JSON.
func TestSBOMManifest(t *testing.T) {
	subject := v1.Descriptor{MediaType: types.OCIImageIndex, Digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}, Size: 123}
	raw, err := SBOMManifest(subject, []byte(`{"spdxVersion":"SPDX-2.3"}`))
	if err != nil {
		t.Fatal(err)
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	wantConfig := v1.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Size: 2,
		Digest: v1.Hash{Algorithm: "sha256", Hex: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"}}
	if m.Config.MediaType != wantConfig.MediaType || m.Config.Digest != wantConfig.Digest || m.Config.Size != 2 {
		t.Errorf("config %+v, want the OCI empty descriptor %+v", m.Config, wantConfig)
	}
	if m.ArtifactType != "application/spdx+json" || m.MediaType != types.OCIManifestSchema1 || m.SchemaVersion != 2 {
		t.Errorf("artifactType %q mediaType %q", m.ArtifactType, m.MediaType)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != "application/spdx+json" || m.Layers[0].Size != 26 {
		t.Errorf("layers %+v", m.Layers)
	}
	if m.Subject == nil || m.Subject.Digest != subject.Digest {
		t.Errorf("subject %+v", m.Subject)
	}
}

// TestProvenance: the SLSA v1 predicate names the commit, the workflow and
// the toolchain read from the binaries, and holds no clock reading.
func TestProvenance(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kse-image")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kse-image").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := testConfig(t)
	cfg.Platforms = DefaultPlatforms
	cfg.Base = "gcr.io/distroless/static-debian12:nonroot@sha256:" + strings.Repeat("b", 64)
	run := BuildRun{Ref: "refs/tags/v1.2.3", Workflow: ".github/workflows/release.yml",
		BuilderID:    "https://github.com/o/r/.github/workflows/release.yml@refs/tags/v1.2.3",
		InvocationID: "https://github.com/o/r/actions/runs/1/attempts/1"}
	pred, err := Provenance(cfg, run, map[string]string{"linux/amd64": bin})
	if err != nil {
		t.Fatal(err)
	}
	var p provenance
	if err := json.Unmarshal(pred, &p); err != nil {
		t.Fatal(err)
	}
	bd := p.BuildDefinition
	if bd.ExternalParameters.Workflow.Path != run.Workflow || bd.ExternalParameters.Workflow.Ref != run.Ref ||
		bd.ExternalParameters.Workflow.Repository != cfg.Source || p.RunDetails.Builder.ID != run.BuilderID {
		t.Errorf("workflow %+v builder %+v", bd.ExternalParameters.Workflow, p.RunDetails.Builder)
	}
	bi, err := os.ReadFile(bin)
	if err != nil || len(bi) == 0 {
		t.Fatal(err)
	}
	tc, err := toolchainOf(map[string]string{"x": bin})
	if err != nil {
		t.Fatal(err)
	}
	if bd.InternalParameters.Toolchain != tc || !strings.HasPrefix(tc, "go1.") {
		t.Errorf("toolchain %q, the binary says %q", bd.InternalParameters.Toolchain, tc)
	}
	if len(bd.ResolvedDependencies) != 3 || bd.ResolvedDependencies[0].Digest["gitCommit"] != cfg.Revision ||
		bd.ResolvedDependencies[2].Digest["sha256"] != strings.Repeat("b", 64) {
		t.Errorf("resolved dependencies %+v", bd.ResolvedDependencies)
	}
	again, _ := Provenance(cfg, run, map[string]string{"linux/amd64": bin})
	if string(again) != string(pred) {
		t.Error("two predicates of one build differ")
	}
}

// TestBaseMustBePinned: a registry base by tag alone is refused before
// anything is compiled.
func TestBaseMustBePinned(t *testing.T) {
	cfg := testConfig(t)
	cfg.Base = "gcr.io/distroless/static-debian12:nonroot"
	cfg.Run.BuilderID = "local"
	if _, err := Build(t.Context(), nil, cfg); err == nil || !strings.Contains(err.Error(), "pin it by digest") {
		t.Errorf("a base by tag gave %v", err)
	}
}
