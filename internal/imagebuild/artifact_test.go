package imagebuild

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
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

// TestLayoutHoldsTheSBOM: the OCI layout of `make image` holds the index
// and, listed beside it, the SBOM artifact whose subject is the index, with
// every blob it names.
func TestLayoutHoldsTheSBOM(t *testing.T) {
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), mutate.IndexAddendum{Add: img})
	sbom := []byte(`{"spdxVersion":"SPDX-2.3"}`)
	dir := filepath.Join(t.TempDir(), "layout")
	if err := WriteLayout(dir, idx, sbom); err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	if len(m.Manifests) != 2 || m.Manifests[0].Digest != want || m.Manifests[1].ArtifactType != SBOMMediaType {
		t.Fatalf("index.json lists %+v, want the index then the SBOM artifact", m.Manifests)
	}
	raw, err := p.Bytes(m.Manifests[1].Digest)
	if err != nil {
		t.Fatal(err)
	}
	var art v1.Manifest
	if err := json.Unmarshal(raw, &art); err != nil {
		t.Fatal(err)
	}
	if art.Subject == nil || art.Subject.Digest != want || art.ArtifactType != SBOMMediaType {
		t.Errorf("SBOM artifact %+v", art)
	}
	for _, d := range []v1.Descriptor{art.Config, art.Layers[0]} {
		if b, err := p.Bytes(d.Digest); err != nil || int64(len(b)) != d.Size {
			t.Errorf("blob %s: %d bytes, %v", d.Digest, len(b), err)
		}
	}
}

// TestBaseMustBePinned: a registry base by tag alone is refused before
// anything is compiled.
func TestBaseMustBePinned(t *testing.T) {
	cfg := testConfig(t)
	cfg.Base = "gcr.io/distroless/static-debian12:nonroot"
	if _, err := Build(t.Context(), nil, cfg); err == nil || !strings.Contains(err.Error(), "pin it by digest") {
		t.Errorf("a base by tag gave %v", err)
	}
}
