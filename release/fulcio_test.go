package release_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fakeFulcio is a local certificate authority that issues what Sigstore's
// Fulcio issues to a GitHub Actions OIDC token: a short-lived code-signing
// certificate whose SAN URI is the workflow identity and whose OIDC issuer
// extensions name https://token.actions.githubusercontent.com (OIDs
// 1.3.6.1.4.1.57264.1.1 and .1.8, sigstore/fulcio docs/oid-info.md). The
// keyless identities of the real release cannot be obtained offline; with
// this CA as the trust root (cosign verify --ca-roots, verify-blob
// --trusted-root) and no transparency log or CT log
// (--insecure-ignore-tlog, --insecure-ignore-sct), cosign checks the
// certificate chain and the identity exactly as it does in the release.
type fakeFulcio struct {
	dir         string
	ca          *x509.Certificate
	caKey       *ecdsa.PrivateKey
	caPEM       string // path
	trustedRoot string // path: a Sigstore trusted root naming the CA
}

const githubIssuer = "https://token.actions.githubusercontent.com"

var (
	oidIssuerV1 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}
	oidIssuerV2 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}
)

func newFakeFulcio(t *testing.T) *fakeFulcio {
	f := &fakeFulcio{dir: t.TempDir()}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fake-fulcio", Organization: []string{"test"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if f.ca, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	f.caKey = key
	f.caPEM = writePEM(t, filepath.Join(f.dir, "ca.pem"), "CERTIFICATE", der)
	root := map[string]any{
		"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
		"tlogs":     []any{}, "ctlogs": []any{}, "timestampAuthorities": []any{},
		"certificateAuthorities": []any{map[string]any{
			"subject":   map[string]any{"organization": "test", "commonName": "fake-fulcio"},
			"uri":       "https://fulcio.invalid",
			"certChain": map[string]any{"certificates": []any{map[string]any{"rawBytes": base64.StdEncoding.EncodeToString(der)}}},
			"validFor":  map[string]any{"start": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)},
		}},
	}
	data, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	f.trustedRoot = filepath.Join(f.dir, "trusted_root.json")
	if err := os.WriteFile(f.trustedRoot, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// issued is a leaf certificate and its key.
type issued struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM string // path
	keyPEM  string // path, PKCS #8
}

// issue makes a certificate for identity (a workflow URI at a ref).
func (f *fakeFulcio) issue(t *testing.T, identity string) issued {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(identity)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := asn1.MarshalWithParams(githubIssuer, "utf8")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		URIs:            []*url.URL{u},
		ExtraExtensions: []pkix.Extension{{Id: oidIssuerV1, Value: []byte(githubIssuer)}, {Id: oidIssuerV2, Value: v2}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, f.ca, &key.PublicKey, f.caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return issued{cert: cert, key: key, certPEM: writePEM(t, filepath.Join(dir, "leaf.pem"), "CERTIFICATE", der),
		keyPEM: writePEM(t, filepath.Join(dir, "leaf.key"), "PRIVATE KEY", pk)}
}

// bundle is the Sigstore bundle (v0.3, the format `cosign sign-blob
// --new-bundle-format` writes) of a signature of data by identity's
// certificate, without transparency log entries.
func (f *fakeFulcio) bundle(t *testing.T, identity string, data []byte) []byte {
	leaf := f.issue(t, identity)
	digest := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, leaf.key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{
		"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
		"verificationMaterial": map[string]any{
			"certificate": map[string]any{"rawBytes": base64.StdEncoding.EncodeToString(leaf.cert.Raw)},
			"tlogEntries": []any{},
		},
		"messageSignature": map[string]any{
			"messageDigest": map[string]any{"algorithm": "SHA2_256", "digest": base64.StdEncoding.EncodeToString(digest[:])},
			"signature":     base64.StdEncoding.EncodeToString(sig),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// trustFlags make cosign verify trust this CA only, with no logs.
func (f *fakeFulcio) trustFlags() string {
	return "--ca-roots " + f.caPEM + " --insecure-ignore-sct --insecure-ignore-tlog"
}

func (f *fakeFulcio) blobTrustFlags() string {
	return "--trusted-root " + f.trustedRoot + " --insecure-ignore-sct --insecure-ignore-tlog"
}

// cosignKey imports a leaf's key into cosign's encrypted key format, for
// `make sign COSIGN_KEY=... COSIGN_CERT=...`.
func cosignKey(t *testing.T, cosign string, env []string, leaf issued) string {
	prefix := filepath.Join(t.TempDir(), "imported")
	run(t, env, false, cosign, "import-key-pair", "--key", leaf.keyPEM, "--output-key-prefix", prefix)
	return prefix + ".key"
}

func writePEM(t *testing.T, path, typ string, der []byte) string {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// releaseIdentity is the identity release.yml of o/r signs with at tag.
func releaseIdentity(repo, tag string) string {
	return "https://github.com/" + repo + "/.github/workflows/release.yml@refs/tags/" + tag
}
