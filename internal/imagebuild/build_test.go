package imagebuild

import (
	"archive/tar"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/spdxcheck"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

func testConfig(t *testing.T) Config {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return Config{
		Version: "v1.2.3", Revision: "abc", Source: "https://example.com/repo", Licenses: License,
		Created: time.Unix(1700000000, 0).UTC(), Base: LocalBase, CABundleFile: ca,
	}
}

// TestAssembleLocalBase: the runtime config and the filesystem of one
// platform's image on the local base, without compiling anything.
func TestAssembleLocalBase(t *testing.T) {
	cfg := testConfig(t)
	cfg.Notices, cfg.LicenseFile = filepath.Join(t.TempDir(), "N"), filepath.Join(t.TempDir(), "L")
	for _, f := range []string{cfg.Notices, cfg.LicenseFile} {
		if err := os.WriteFile(f, []byte("text of "+filepath.Base(f)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(bin, []byte("\x7fELF fake"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := v1.Platform{OS: "linux", Architecture: "arm64"}
	build := func() v1.Image {
		base, err := baseImage(t.Context(), cfg, p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := assemble(base, cfg, p, bin)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	img := build()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.Architecture != "arm64" || c.User != User || !slices.Equal(c.Entrypoint, []string{BinaryPath}) || !slices.Equal(c.Cmd, []string{"run"}) {
		t.Errorf("config arch %s user %q entrypoint %q cmd %q", cf.Architecture, c.User, c.Entrypoint, c.Cmd)
	}
	if c.Labels["org.opencontainers.image.version"] != "v1.2.3" || c.Labels["org.opencontainers.image.revision"] != "abc" ||
		c.Labels["org.opencontainers.image.source"] != cfg.Source || c.Labels["org.opencontainers.image.licenses"] != "Apache-2.0" {
		t.Errorf("labels %v", c.Labels)
	}
	if !slices.Contains(c.Env, "SSL_CERT_FILE="+CABundle) {
		t.Errorf("env %v", c.Env)
	}
	files := map[string]*tar.Header{}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = h
	}
	for _, want := range []string{"usr/local/bin/kubecost-s3-exporter", "etc/ssl/certs/ca-certificates.crt", "etc/passwd", "etc/group", "tmp", "home/nonroot",
		"usr/share/doc/kubecost-s3-exporter/LICENSE", "usr/share/doc/kubecost-s3-exporter/THIRD_PARTY_NOTICES"} {
		if files[want] == nil {
			t.Errorf("no %s in the image", want)
		}
	}
	if h := files["usr/local/bin/kubecost-s3-exporter"]; h != nil && h.Mode&0o111 == 0 {
		t.Errorf("binary mode %o", h.Mode)
	}
	if h := files["home/nonroot"]; h != nil && h.Uid != 65532 {
		t.Errorf("home/nonroot owned by %d", h.Uid)
	}
	if h := files["tmp"]; h != nil && h.Mode&0o1777 != 0o1777 {
		t.Errorf("tmp mode %o, want 1777", h.Mode)
	}
	for name := range files {
		if strings.HasSuffix(name, "/sh") {
			t.Errorf("a shell: %s", name)
		}
	}
	// One input, one digest: timestamps are fixed.
	d1, _ := img.Digest()
	if d2, _ := build().Digest(); d1 != d2 {
		t.Errorf("two builds of one input: %s and %s", d1, d2)
	}
}

func TestLocalBaseNeedsCertificates(t *testing.T) {
	cfg := testConfig(t)
	empty := filepath.Join(t.TempDir(), "empty.pem")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.CABundleFile = empty
	if _, err := localBase(cfg); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("an empty CA bundle gave %v", err)
	}
}

// TestSPDX reads the build information of a real binary, kse-image (test
// binaries carry no module list).
func TestSPDX(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kse-image")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kse-image").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	doc, err := SPDX(testConfig(t), map[string]string{"linux/amd64": bin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := spdxcheck.Validate(doc); err != nil {
		t.Errorf("not valid SPDX 2.3: %v", err)
	}
	var d struct {
		SPDXVersion string
		Packages    []struct {
			Name, VersionInfo, LicenseDeclared string
			Checksums                          []struct{ Algorithm, ChecksumValue string }
			ExternalRefs                       []struct{ ReferenceLocator string }
		}
		Relationships []struct{ RelationshipType string }
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	if d.SPDXVersion != "SPDX-2.3" || len(d.Packages) < 2 {
		t.Fatalf("SBOM %s with %d packages", d.SPDXVersion, len(d.Packages))
	}
	if p := d.Packages[0]; p.Name != "kubecost-s3-exporter" || len(p.Checksums) != 1 || len(p.Checksums[0].ChecksumValue) != 64 || p.LicenseDeclared != "Apache-2.0" {
		t.Errorf("binary package %+v", p)
	}
	goVersion := runtime.Version() // go build above ran this test's toolchain
	i := slices.IndexFunc(d.Packages, func(p struct {
		Name, VersionInfo, LicenseDeclared string
		Checksums                          []struct{ Algorithm, ChecksumValue string }
		ExternalRefs                       []struct{ ReferenceLocator string }
	}) bool {
		return p.Name == "stdlib"
	})
	if i < 0 {
		t.Fatal("no stdlib package: scanners cannot see standard-library advisories")
	}
	if p := d.Packages[i]; p.VersionInfo != goVersion || len(p.ExternalRefs) != 2 ||
		p.ExternalRefs[0].ReferenceLocator != "pkg:golang/stdlib@"+strings.TrimPrefix(goVersion, "go") || p.LicenseDeclared != "BSD-3-Clause" {
		t.Errorf("stdlib package %+v, want version %s", p, goVersion)
	}
	found := false
	for _, p := range d.Packages[1:] {
		if p.Name == "github.com/google/go-containerregistry" && len(p.ExternalRefs) == 1 && strings.HasPrefix(p.ExternalRefs[0].ReferenceLocator, "pkg:golang/github.com/google/go-containerregistry@v") {
			found = true
		}
	}
	if !found {
		t.Error("the SBOM does not list go-containerregistry, which kse-image links")
	}
}

// TestSPDXLicensesFromNotices: with the notices' identifiers every module
// and the standard library declare them, and a linked module the notices
// lack fails the build instead of shipping NOASSERTION.
func TestSPDXLicensesFromNotices(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kse-image")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kse-image").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	lic := map[string]string{"stdlib": "BSD-3-Clause"}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		lic[d.Path+" "+d.Version] = "MIT"
	}
	doc, err := SPDX(testConfig(t), map[string]string{"linux/amd64": bin}, lic)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Packages []struct{ Name, LicenseDeclared, LicenseConcluded, PrimaryPackagePurpose string }
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Packages {
		want := map[string]string{"kubecost-s3-exporter": "Apache-2.0", "stdlib": "BSD-3-Clause"}[p.Name]
		if want == "" {
			want = "MIT"
		}
		if p.LicenseDeclared != want || (p.Name != "kubecost-s3-exporter" && p.LicenseConcluded != want) {
			t.Errorf("%s declares %q (concluded %q), want %q", p.Name, p.LicenseDeclared, p.LicenseConcluded, want)
		}
	}
	delete(lic, bi.Deps[0].Path+" "+bi.Deps[0].Version)
	if _, err := SPDX(testConfig(t), map[string]string{"linux/amd64": bin}, lic); err == nil || !strings.Contains(err.Error(), "make notices") {
		t.Errorf("a module missing from the notices gave %v", err)
	}
}

// TestBuildEnvFixesTheBytes: whatever the caller's environment says about
// VCS stamping, flags or instruction-set levels, the go command gets the
// release's values (GOFLAGS non-empty, so a go env file cannot add any).
func TestBuildEnvFixesTheBytes(t *testing.T) {
	env := buildEnv([]string{"GOFLAGS=-buildvcs=true -tags=x", "GOAMD64=v3", "GOPROXY=off", "CGO_ENABLED=1"}, v1.Platform{OS: "linux", Architecture: "arm64"})
	want := []string{"GOPROXY=off", "GOFLAGS=-trimpath -buildvcs=false", "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64", "GOAMD64=v1", "GOARM64=v8.0"}
	if !slices.Equal(env, want) {
		t.Errorf("buildEnv = %q, want %q", env, want)
	}
}

// TestCheckStamp: a binary with VCS data (built in a git work tree with
// -buildvcs=true) is refused; one built as the release builds passes.
func TestCheckStamp(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	files := map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {}\n"}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, c := range []struct {
		env     []string
		wantErr bool
	}{{[]string{"GOFLAGS=-buildvcs=true"}, true}, {buildEnv(nil, v1.Platform{OS: "linux", Architecture: "amd64"}), false}} {
		bin := filepath.Join(t.TempDir(), "m")
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), c.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		if err := checkStamp(bin); (err != nil) != c.wantErr {
			t.Errorf("env %q: checkStamp = %v", c.env, err)
		}
	}
}
