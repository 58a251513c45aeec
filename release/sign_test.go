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
	fulcio                 *fakeFulcio
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

func cosignEnv(t *testing.T, cosign string) []string {
	dir := t.TempDir()
	return []string{"COSIGN_PASSWORD=test-only-password", "COSIGN_YES=true", "COSIGN_BIN=" + cosign,
		"HOME=" + dir, "TUF_ROOT=" + filepath.Join(dir, "tuf"), "SIGSTORE_NO_CACHE=true"}
}

const regFlags = "--allow-http-registry --allow-insecure-registry"

// checkSigned runs `make release-assets sign` as release.yml at the tag
// would sign: with a key and a certificate for that identity from the
// fake Fulcio (the password reaches cosign through its environment only;
// no transparency log), then verifies every signature and attestation
// with the commands docs/release.md gives users, the identity flags
// included, the fake Fulcio as the trust root. The SLSA provenance is
// GitHub's (build.yml) and cannot be made offline; release/builder_test.go
// checks the workflow that makes it.
func checkSigned(t *testing.T, cosign string, r signedRelease) {
	env := cosignEnv(t, cosign)
	id := releaseIdentity("o/r", version)
	leaf := r.fulcio.issue(t, id)
	key := cosignKey(t, cosign, env, leaf)
	run(t, env, false, "make", "-C", r.repoRoot, "release-assets", "sign",
		"VERSION="+version, "CHART_VERSION="+chartVersion, "RELEASE_DIR="+r.relDir,
		"IMAGE_REPO="+r.imageRepo, "CHART_REPO="+r.chartRepo, "COSIGN_KEY="+key,
		"COSIGN_CERT="+leaf.certPEM, "COSIGN_CERT_CHAIN="+r.fulcio.caPEM,
		"COSIGN_FLAGS=--tlog-upload=false", "COSIGN_REGISTRY_FLAGS="+regFlags)

	verify := func(wantErr bool, args ...string) string {
		flags := append([]string{"--certificate-identity", id, "--certificate-oidc-issuer", githubIssuer}, strings.Fields(r.fulcio.trustFlags())...)
		args = append(append(args[:1:1], flags...), args[1:]...)
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

	// SHA256SUMS: `make sign` writes a Sigstore bundle. cosign v2 signs a
	// blob with a key only (no certificate), so this one is checked by the
	// key; TestReleaseContent checks bundles under the identity.
	sums := filepath.Join(r.relDir, "SHA256SUMS")
	verifyBlob := func(wantErr bool, file string) string {
		return run(t, env, wantErr, cosign, "verify-blob", "--key", strings.TrimSuffix(key, ".key")+".pub", "--new-bundle-format",
			"--trusted-root", r.fulcio.trustedRoot, "--insecure-ignore-tlog", "--bundle", sums+".sigstore.json", file)
	}
	verifyBlob(false, sums)
	checkSums(t, readDir(t, r.relDir))

	t.Run("tampering fails", func(t *testing.T) {
		checkTampering(t, verify, verifyBlob, r, insecure)
	})
}

// checkOtherSigners: a `.sig` and `.att` made by hand with a key (as a
// manual signing makes them), and signatures by another workflow's
// certificate, are there, and make release-check still reads every
// signature as absent: the plan then has release.yml sign.
func checkOtherSigners(t *testing.T, cosign string, r signedRelease, rc releaseCheck) {
	env := cosignEnv(t, cosign)
	dir := t.TempDir()
	run(t, env, false, cosign, "generate-key-pair", "--output-key-prefix", filepath.Join(dir, "byhand"))
	other := r.fulcio.issue(t, "https://github.com/o/r/.github/workflows/other.yml@refs/tags/"+version)
	otherKey := cosignKey(t, cosign, env, other)
	image := r.imageRepo + "@" + r.digest
	chart := strings.TrimPrefix(r.chartRepo, "oci://") + "/kubecost-s3-exporter@" + r.chartDigest
	for _, signer := range [][]string{
		{"--key", filepath.Join(dir, "byhand.key")},
		{"--key", otherKey, "--certificate", other.certPEM, "--certificate-chain", r.fulcio.caPEM},
	} {
		flags := append(append([]string{"--yes", "--tlog-upload=false"}, strings.Fields(regFlags)...), signer...)
		run(t, env, false, cosign, append(append([]string{"sign"}, flags...), image)...)
		run(t, env, false, cosign, append(append([]string{"sign"}, flags...), chart)...)
		run(t, env, false, cosign, append(append([]string{"attest", "--type", "spdxjson", "--predicate",
			filepath.Join(r.relDir, "kubecost-s3-exporter_"+version+".spdx.json")}, flags...), image)...)
	}
	rc.check(t, "absent")
}

// checkTampering: an edited SHA256SUMS and a re-pointed image tag fail
// verification.
func checkTampering(t *testing.T, verify func(bool, ...string) string, verifyBlob func(bool, string) string, r signedRelease, insecure []string) {
	dir := t.TempDir()
	sums, err := os.ReadFile(filepath.Join(r.relDir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "SHA256SUMS")
	if err := os.WriteFile(edited, []byte(strings.Replace(string(sums), string(sums[:8]), "00000000", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	failsWith(t, "edited SHA256SUMS", "verif", verifyBlob(true, edited))

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
