package release_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
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
	cfg                    imagebuild.Config
	res                    *imagebuild.Result
}

// statement is the in-toto statement inside a DSSE envelope.
type statement struct {
	Type          string `json:"_type"`
	PredicateType string `json:"predicateType"`
	Subject       []struct {
		Name   string
		Digest map[string]string
	} `json:"subject"`
	Predicate struct {
		BuildDefinition struct {
			ExternalParameters struct {
				Workflow struct{ Ref, Repository, Path string }
			}
			InternalParameters   struct{ Toolchain string }
			ResolvedDependencies []struct {
				URI    string
				Digest map[string]string
			}
		}
		RunDetails struct {
			Builder struct{ ID string }
		}
	} `json:"predicate"`
}

// checkSigned runs `make release-assets sign` with a key pair made here
// (the password reaches cosign through its environment only; no
// transparency log: signing and verifying are offline), then verifies
// every signature and attestation with the commands docs/release.md gives
// users, key instead of identity.
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

	// The image's SLSA provenance: subject the index, naming commit,
	// workflow and toolchain.
	toolchain := strings.TrimSpace(strings.Fields(run(t, nil, false, "go", "version", r.res.Binaries["linux/amd64"]))[1])
	out := verify(false, append([]string{"verify-attestation", "--type", "slsaprovenance1", image}, insecure...)...)
	st := envelopes(t, out)
	if len(st) == 0 {
		t.Fatalf("verify-attestation printed no statement:\n%s", tail(out, 2000))
	}
	checkProvenance(t, st[0], strings.TrimPrefix(r.digest, "sha256:"), r.cfg.Revision, toolchain)
	out = verify(false, append([]string{"verify-attestation", "--type", "spdxjson", image}, insecure...)...)
	if len(envelopes(t, out)) == 0 {
		t.Errorf("no SPDX attestation:\n%s", tail(out, 2000))
	}

	// Each binary's provenance, and the signed SHA256SUMS.
	for _, p := range []string{"linux_amd64", "linux_arm64"} {
		bin := filepath.Join(r.relDir, "kubecost-s3-exporter_"+p)
		bundle := bin + ".intoto.cosign.bundle"
		verify(false, "verify-blob-attestation", "--type", "slsaprovenance1", "--bundle", bundle, bin)
		checkProvenance(t, bundleStatement(t, bundle), fileSHA256(t, bin), r.cfg.Revision, toolchain)
	}
	sums := filepath.Join(r.relDir, "SHA256SUMS")
	verify(false, "verify-blob", "--bundle", sums+".cosign.bundle", sums)
	checkSums(t, readDir(t, r.relDir))

	t.Run("tampering fails", func(t *testing.T) {
		checkTampering(t, verify, r, insecure)
	})
}

// checkTampering: a forged provenance (another commit), a binary swapped
// for the other one, an edited SHA256SUMS and a re-pointed image tag all
// fail verification.
func checkTampering(t *testing.T, verify func(bool, ...string) string, r signedRelease, insecure []string) {
	dir := t.TempDir()
	amd := filepath.Join(r.relDir, "kubecost-s3-exporter_linux_amd64")
	arm := filepath.Join(r.relDir, "kubecost-s3-exporter_linux_arm64")
	forged := filepath.Join(dir, "forged.cosign.bundle")
	if err := os.WriteFile(forged, forgeBundle(t, amd+".intoto.cosign.bundle", r.cfg.Revision, strings.Repeat("f", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	failsWith(t, "forged provenance", "accepted signatures do not match threshold",
		verify(true, "verify-blob-attestation", "--type", "slsaprovenance1", "--bundle", forged, amd))
	failsWith(t, "arm64 binary, amd64 bundle", "no matching subject digest",
		verify(true, "verify-blob-attestation", "--type", "slsaprovenance1", "--bundle", amd+".intoto.cosign.bundle", arm))

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
	failsWith(t, "provenance of the re-pointed tag", "no matching attestations",
		verify(true, append([]string{"verify-attestation", "--type", "slsaprovenance1", r.imageRepo + ":" + version}, insecure...)...))
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

func checkProvenance(t *testing.T, st statement, subjectSHA, revision, toolchain string) {
	t.Helper()
	p := st.Predicate
	if st.Type != "https://in-toto.io/Statement/v1" && st.Type != "https://in-toto.io/Statement/v0.1" {
		t.Errorf("statement type %q", st.Type)
	}
	if st.PredicateType != imagebuild.ProvenancePredicateType {
		t.Errorf("predicate type %q, want SLSA v1", st.PredicateType)
	}
	if len(st.Subject) != 1 || st.Subject[0].Digest["sha256"] != subjectSHA {
		t.Errorf("subject %+v, want sha256 %s", st.Subject, subjectSHA)
	}
	wf := p.BuildDefinition.ExternalParameters.Workflow
	deps := p.BuildDefinition.ResolvedDependencies
	if wf.Path != buildRun.Workflow || wf.Ref != buildRun.Ref || p.RunDetails.Builder.ID != buildRun.BuilderID {
		t.Errorf("workflow %+v builder %q", wf, p.RunDetails.Builder.ID)
	}
	if len(deps) == 0 || deps[0].Digest["gitCommit"] != revision {
		t.Errorf("resolved dependencies %+v, want the commit %s", deps, revision)
	}
	if p.BuildDefinition.InternalParameters.Toolchain != toolchain {
		t.Errorf("toolchain %q, the binary says %s", p.BuildDefinition.InternalParameters.Toolchain, toolchain)
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

func fileSHA256(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
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

// A blob attestation's bundle holds the DSSE envelope: in the Sigstore
// bundle format as dsseEnvelope, in cosign's older one base64-encoded as
// base64Signature.
type blobBundle map[string]json.RawMessage

type dsse struct {
	PayloadType string            `json:"payloadType"`
	Payload     string            `json:"payload"`
	Signatures  []json.RawMessage `json:"signatures"`
}

func readBundle(t *testing.T, path string) (blobBundle, dsse) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b blobBundle
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var env dsse
	if raw, ok := b["dsseEnvelope"]; ok {
		err = json.Unmarshal(raw, &env)
	} else if raw, ok := b["base64Signature"]; ok {
		var s string
		if err = json.Unmarshal(raw, &s); err == nil {
			var dec []byte
			if dec, err = base64.StdEncoding.DecodeString(s); err == nil {
				err = json.Unmarshal(dec, &env)
			}
		}
	} else {
		t.Fatalf("%s: no DSSE envelope in the bundle (keys %v)", path, keys(b))
	}
	if err != nil || env.Payload == "" {
		t.Fatalf("%s: envelope: %v", path, err)
	}
	return b, env
}

func bundleStatement(t *testing.T, path string) statement {
	_, env := readBundle(t, path)
	return decodeStatement(t, env.Payload)
}

// forgeBundle rewrites the statement's commit and keeps the signature: what
// an attacker with the bundle but not the key can make.
func forgeBundle(t *testing.T, path, from, to string) []byte {
	b, env := readBundle(t, path)
	raw, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), from) {
		t.Fatalf("the statement does not name %s", from)
	}
	env.Payload = base64.StdEncoding.EncodeToString([]byte(strings.ReplaceAll(string(raw), from, to)))
	enc, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b["dsseEnvelope"]; ok {
		b["dsseEnvelope"] = enc
	} else {
		b["base64Signature"], _ = json.Marshal(base64.StdEncoding.EncodeToString(enc))
	}
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(m blobBundle) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
