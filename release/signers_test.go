package release_test

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestRegistrySignaturesByIdentity: `kse-release registry-state` (the
// signature half of make release-check) reads the image's and the chart's
// signatures and the SBOM attestation as present only when cosign verifies
// them under release.yml's identity at the tag. A `.sig`/`.att` made by
// hand with a key, or with a certificate for another workflow or another
// tag, is in the registry and still reads as absent; `make sign` with a
// certificate for release.yml at the tag makes all three present. The
// registry is go-containerregistry's in-process one (TestRegistryRoundTrip
// repeats this on the distribution registry); cosign is the pinned one,
// the certificates the fake Fulcio's.
func TestRegistrySignaturesByIdentity(t *testing.T) {
	cosign := tooltest.Require(t, "cosign", "COSIGN_BIN")
	bin := buildKseRelease(t)
	fulcio := newFakeFulcio(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	imageRepo, chartRepo := host+"/o/kse", host+"/o/charts"
	dir := t.TempDir()
	for ref, file := range map[string]string{imageRepo + ":" + version: "image.digest", chartRepo + "/kubecost-s3-exporter:" + chartVersion: "chart.digest"} {
		idx, err := random.Index(64, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		tag, err := name.NewTag(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.WriteIndex(tag, idx); err != nil {
			t.Fatal(err)
		}
		d, _ := idx.Digest()
		if err := os.WriteFile(filepath.Join(dir, file), []byte(d.String()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sbom := filepath.Join(dir, "kubecost-s3-exporter_"+version+".spdx.json")
	if err := os.WriteFile(sbom, []byte(`{"spdxVersion":"SPDX-2.3"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	imageDigest, _ := os.ReadFile(filepath.Join(dir, "image.digest"))
	chartDigest, _ := os.ReadFile(filepath.Join(dir, "chart.digest"))
	image := imageRepo + "@" + strings.TrimSpace(string(imageDigest))
	chart := chartRepo + "/kubecost-s3-exporter@" + strings.TrimSpace(string(chartDigest))

	state := func() string {
		cmd := exec.Command(bin, "registry-state", "-dir", dir, "-tag", version, "-repo", "o/r", "-cosign", cosign,
			"-image", imageRepo, "-chart", chartRepo+"/kubecost-s3-exporter")
		cmd.Env = append(os.Environ(), "GITHUB_SERVER_URL=https://github.com", "COSIGN_TRUST_FLAGS="+fulcio.trustFlags(), "COSIGN_REGISTRY_FLAGS="+regFlags)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("registry-state: %v", err)
		}
		return string(out)
	}
	absent := "image-signature=absent\nsbom-attestation=absent\nchart-signature=absent\n"
	if got := state(); got != absent {
		t.Fatalf("unsigned: %q", got)
	}

	env := cosignEnv(t, cosign)
	run(t, env, false, cosign, "generate-key-pair", "--output-key-prefix", filepath.Join(dir, "byhand"))
	for name, signer := range map[string][]string{
		"by hand with a key":            {"--key", filepath.Join(dir, "byhand.key")},
		"by another workflow":           certSigner(t, cosign, env, fulcio, "https://github.com/o/r/.github/workflows/other.yml@refs/tags/"+version),
		"by release.yml at another tag": certSigner(t, cosign, env, fulcio, releaseIdentity("o/r", "v9.8.7-rc.0")),
		"by a fork's release.yml":       certSigner(t, cosign, env, fulcio, releaseIdentity("x/r", version)),
	} {
		flags := append(append([]string{"--yes", "--tlog-upload=false"}, strings.Fields(regFlags)...), signer...)
		run(t, env, false, cosign, append(append([]string{"sign"}, flags...), image)...)
		run(t, env, false, cosign, append(append([]string{"sign"}, flags...), chart)...)
		run(t, env, false, cosign, append(append([]string{"attest", "--type", "spdxjson", "--predicate", sbom}, flags...), image)...)
		if got := state(); got != absent {
			t.Errorf("signed %s: %q, want every signature absent", name, got)
		}
	}

	// make sign, as release.yml at the tag signs (key and certificate
	// instead of keyless).
	leaf := fulcio.issue(t, releaseIdentity("o/r", version))
	run(t, env, false, "make", "-C", "..", "sign", "SIGN=image sbom chart", "VERSION="+version, "RELEASE_DIR="+dir,
		"IMAGE_REPO="+imageRepo, "CHART_REPO=oci://"+chartRepo, "COSIGN_KEY="+cosignKey(t, cosign, env, leaf),
		"COSIGN_CERT="+leaf.certPEM, "COSIGN_CERT_CHAIN="+fulcio.caPEM, "COSIGN_FLAGS=--tlog-upload=false", "COSIGN_REGISTRY_FLAGS="+regFlags)
	if got, want := state(), "image-signature=present\nsbom-attestation=present\nchart-signature=present\n"; got != want {
		t.Errorf("after make sign by release.yml: %q, want %q", got, want)
	}
}

func certSigner(t *testing.T, cosign string, env []string, f *fakeFulcio, identity string) []string {
	leaf := f.issue(t, identity)
	return []string{"--key", cosignKey(t, cosign, env, leaf), "--certificate", leaf.certPEM, "--certificate-chain", f.caPEM}
}
