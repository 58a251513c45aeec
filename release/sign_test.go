package release_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/imagebuild"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

type signedRelease struct {
	repoRoot, relDir       string
	imageRepo, digest      string
	chartRepo, chartDigest string
	res                    *imagebuild.Result
}

// statement is the in-toto statement inside a DSSE envelope: here the
// SBOM attestation, whose predicate is the SPDX document.
type statement struct {
	Type          string `json:"_type"`
	PredicateType string `json:"predicateType"`
	Subject       []struct {
		Name   string
		Digest map[string]string
	} `json:"subject"`
	Predicate struct {
		SPDXVersion string `json:"spdxVersion"`
		Name        string `json:"name"`
	} `json:"predicate"`
}

// checkSigned runs `make release-assets sign` with a key pair made here
// (the password reaches cosign through its environment only; no
// transparency log: signing and verifying are offline), then verifies
// every signature and attestation with the commands docs/release.md gives
// users, key instead of identity. The SLSA provenance is GitHub's
// (build.yml) and cannot be made offline; release/plan_test.go checks the
// workflow that makes it.
func checkSigned(t *testing.T, cosign string, r signedRelease) {
	dir := t.TempDir()
	env := []string{"COSIGN_PASSWORD=test-only-password", "COSIGN_YES=true", "COSIGN_BIN=" + cosign,
		"HOME=" + dir, "TUF_ROOT=" + filepath.Join(dir, "tuf"), "SIGSTORE_NO_CACHE=true"}
	key, pub := filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	run(t, env, false, cosign, "generate-key-pair", "--output-key-prefix", filepath.Join(dir, "cosign"))
	regFlags := "--allow-http-registry --allow-insecure-registry"
	run(t, env, false, "make", "-C", r.repoRoot, "release-assets", "sign",
		"VERSION="+version, "CHART_VERSION="+chartVersion, "RELEASE_DIR="+r.relDir,
		"IMAGE_REPO="+r.imageRepo, "CHART_REPO="+r.chartRepo, "COSIGN_KEY="+key,
		"COSIGN_FLAGS=--tlog-upload=false", "COSIGN_REGISTRY_FLAGS="+regFlags)

	verify := func(wantErr bool, args ...string) string {
		args = append(append(args[:1:1], "--key", pub, "--insecure-ignore-tlog=true"), args[1:]...)
		return run(t, env, wantErr, cosign, args...)
	}
	insecure := strings.Fields(regFlags)
	image := r.imageRepo + "@" + r.digest
	chartRef := strings.TrimPrefix(r.chartRepo, "oci://") + "/kubecost-s3-exporter"
	verify(false, append([]string{"verify", image}, insecure...)...)
	verify(false, append([]string{"verify", r.imageRepo + ":" + version}, insecure...)...)
	verify(false, append([]string{"verify", chartRef + "@" + r.chartDigest}, insecure...)...)
	verify(false, append([]string{"verify", chartRef + ":" + chartVersion}, insecure...)...)

	// The SBOM attestation: subject the index, predicate the SPDX document.
	out := verify(false, append([]string{"verify-attestation", "--type", "spdxjson", image}, insecure...)...)
	st := envelopes(t, out)
	if len(st) == 0 {
		t.Fatalf("verify-attestation printed no statement:\n%s", tail(out, 2000))
	}
	if s := st[0]; len(s.Subject) != 1 || "sha256:"+s.Subject[0].Digest["sha256"] != r.digest ||
		s.Predicate.SPDXVersion != "SPDX-2.3" || s.Predicate.Name != "kubecost-s3-exporter-"+version {
		t.Errorf("SBOM attestation %+v, want subject %s and the SPDX document", s, r.digest)
	}

	sums := filepath.Join(r.relDir, "SHA256SUMS")
	verify(false, "verify-blob", "--bundle", sums+".cosign.bundle", sums)
	checkSums(t, readDir(t, r.relDir))

	t.Run("tampering fails", func(t *testing.T) {
		checkTampering(t, verify, r, insecure)
	})
}

// checkTampering: an edited SHA256SUMS and a re-pointed image tag fail
// verification.
func checkTampering(t *testing.T, verify func(bool, ...string) string, r signedRelease, insecure []string) {
	dir := t.TempDir()
	sums, err := os.ReadFile(filepath.Join(r.relDir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "SHA256SUMS")
	if err := os.WriteFile(edited, []byte(strings.Replace(string(sums), string(sums[:8]), "00000000", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	failsWith(t, "edited SHA256SUMS", "invalid signature",
		verify(true, "verify-blob", "--bundle", filepath.Join(r.relDir, "SHA256SUMS.cosign.bundle"), edited))

	// Re-point the tag at an index nobody signed: verification by tag fails.
	tampered := mutate.Annotations(r.res.Index, map[string]string{"tampered": "true"}).(v1.ImageIndex)
	tag, err := name.NewTag(r.imageRepo + ":" + version)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, tampered, remote.WithContext(t.Context())); err != nil {
		t.Fatal(err)
	}
	failsWith(t, "re-pointed tag", "no signatures found",
		verify(true, append([]string{"verify", r.imageRepo + ":" + version}, insecure...)...))
	failsWith(t, "SBOM of the re-pointed tag", "no matching attestations",
		verify(true, append([]string{"verify-attestation", "--type", "spdxjson", r.imageRepo + ":" + version}, insecure...)...))
	// Put the signed index back for the install.
	if err := remote.WriteIndex(tag, r.res.Index, remote.WithContext(t.Context())); err != nil {
		t.Fatal(err)
	}
}

// failsWith: a verification failed for the reason wanted, not a typo'd
// flag or an unreachable registry.
func failsWith(t *testing.T, what, want, out string) {
	t.Helper()
	if !strings.Contains(out, want) {
		t.Errorf("%s: cosign failed without %q:\n%s", what, want, tail(out, 2000))
	}
}

// envelopes decodes the DSSE envelopes cosign verify-attestation prints,
// one JSON object a line.
func envelopes(t *testing.T, out string) []statement {
	var sts []statement
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var env struct{ PayloadType, Payload string }
		if json.Unmarshal([]byte(sc.Text()), &env) != nil || env.Payload == "" {
			continue
		}
		sts = append(sts, decodeStatement(t, env.Payload))
	}
	return sts
}

func decodeStatement(t *testing.T, payload string) statement {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	var st statement
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func readDir(t *testing.T, dir string) map[string][]byte {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.Type().IsRegular() {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files["bin/release/"+e.Name()] = data
		}
	}
	return files
}
