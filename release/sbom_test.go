package release_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/imagebuild"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/spdxcheck"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// checkSBOM reads the SBOM back the way a client of a registry without
// the referrers API does: through the referrers tag sha256-<index hex>.
// The artifact is an OCI 1.1 one (empty config, artifactType), the
// document valid SPDX 2.3 with the project's licence, the Go standard
// library at the binaries' Go version, and exactly the modules `go
// version -m` reads from the binary.
func checkSBOM(t *testing.T, reg, repo string, digest v1.Hash, res *imagebuild.Result) {
	// The distribution registry has no referrers API: the fallback tag is
	// the only way to the SBOM, so this reads what every client reads.
	resp, err := http.Get("http://" + reg + "/v2/kubecost-s3-exporter/referrers/" + digest.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Logf("the registry serves the referrers API; the fallback tag is read anyway")
	}
	opts := []remote.Option{remote.WithContext(t.Context())}
	fallback, err := name.NewTag(repo + ":" + strings.Replace(digest.String(), ":", "-", 1))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(fallback, opts...)
	if err != nil {
		t.Fatalf("referrers fallback tag %s: %v", fallback, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(im.Manifests, func(d v1.Descriptor) bool { return d.ArtifactType == imagebuild.SBOMMediaType })
	if i < 0 {
		t.Fatalf("no %s among the %d referrers of %s", imagebuild.SBOMMediaType, len(im.Manifests), digest)
	}
	ref := fallback.Context().Digest(im.Manifests[i].Digest.String())
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var m v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	if m.ArtifactType != imagebuild.SBOMMediaType || m.Config.MediaType != imagebuild.EmptyMediaType || m.Config.Size != 2 ||
		m.Config.Digest.String() != "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a" {
		t.Errorf("artifact manifest: artifactType %q config %+v; want the OCI 1.1 empty config", m.ArtifactType, m.Config)
	}
	if m.Subject == nil || m.Subject.Digest != digest || len(m.Layers) != 1 || m.Layers[0].MediaType != imagebuild.SBOMMediaType {
		t.Fatalf("artifact manifest subject %+v layers %+v", m.Subject, m.Layers)
	}
	cfg := blob(t, fallback.Context(), m.Config.Digest)
	if string(cfg) != "{}" {
		t.Errorf("the config blob is %q, want {}", cfg)
	}
	doc := blob(t, fallback.Context(), m.Layers[0].Digest)
	if !bytes.Equal(doc, res.SBOM) {
		t.Error("the SBOM read back differs from the one built")
	}
	if err := spdxcheck.Validate(doc); err != nil {
		t.Errorf("not valid SPDX 2.3: %v", err)
	}
	checkSBOMContent(t, doc, res.Binaries["linux/amd64"])
}

func blob(t *testing.T, repo name.Repository, d v1.Hash) []byte {
	l, err := remote.Layer(repo.Digest(d.String()), remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := l.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type sbomPackage struct {
	SPDXID, Name, VersionInfo, LicenseDeclared string
	ExternalRefs                               []struct{ ReferenceLocator string }
}

func checkSBOMContent(t *testing.T, doc []byte, bin string) {
	var d struct{ Packages []sbomPackage }
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	mods, goVersion := goVersionM(t, bin)
	var got []string
	stdlib := false
	for _, p := range d.Packages {
		switch {
		case strings.HasPrefix(p.SPDXID, "SPDXRef-Binary-"):
			if p.LicenseDeclared != "Apache-2.0" {
				t.Errorf("%s declares %q, want Apache-2.0", p.SPDXID, p.LicenseDeclared)
			}
		case p.Name == "stdlib":
			stdlib = true
			if p.VersionInfo != goVersion || len(p.ExternalRefs) == 0 || p.ExternalRefs[0].ReferenceLocator != "pkg:golang/stdlib@"+strings.TrimPrefix(goVersion, "go") {
				t.Errorf("stdlib package %+v, want %s", p, goVersion)
			}
		case strings.HasPrefix(p.SPDXID, "SPDXRef-Module-"):
			got = append(got, p.Name+"@"+p.VersionInfo)
			if forbidden(p.Name) {
				t.Errorf("SBOM lists %s, a test-only module", p.Name)
			}
			if p.LicenseDeclared == "" || p.LicenseDeclared == "NOASSERTION" {
				t.Errorf("SBOM: %s declares no licence (THIRD_PARTY_NOTICES names one for every module)", p.Name)
			}
		}
	}
	if !stdlib {
		t.Error("the SBOM lists no Go standard library")
	}
	slices.Sort(got)
	if !slices.Equal(got, mods) {
		t.Errorf("SBOM modules %v\ngo version -m: %v", got, mods)
	}
	t.Logf("SBOM: %d modules, equal to go version -m; stdlib %s", len(got), goVersion)
}

// goVersionM reads the binary's modules (after replacements) and Go
// version with `go version -m`, a tool the project did not write.
func goVersionM(t *testing.T, bin string) ([]string, string) {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	var mods []string
	goVersion := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for first := true; sc.Scan(); first = false {
		f := strings.Fields(sc.Text())
		switch {
		case first && len(f) >= 2:
			goVersion = f[1]
		case len(f) >= 3 && f[0] == "dep":
			mods = append(mods, f[1]+"@"+f[2])
		case len(f) >= 3 && f[0] == "=>":
			mods[len(mods)-1] = f[1] + "@" + f[2]
		}
	}
	slices.Sort(mods)
	if len(mods) == 0 || goVersion == "" {
		t.Fatalf("go version -m printed no modules:\n%s", out)
	}
	return mods, goVersion
}
