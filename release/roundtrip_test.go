package release_test

import (
	"archive/tar"
	"debug/elf"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/chartpack"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/imagebuild"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubetest"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
)

const (
	version      = "v9.8.7-rc.1"
	chartVersion = "9.8.7-rc.1" // the tag without its v, as the release makes it
	clusterARN   = "arn:aws:eks:us-east-1:111122223333:cluster/prod"
)

// TestRegistryRoundTrip is the release on one machine: build the index,
// push image and chart, sign and attest them with `make sign`, pull
// everything back and verify it as a user would, install from the
// registry. The steps share the pushed artifacts, so they run in order.
func TestRegistryRoundTrip(t *testing.T) {
	helm := tooltest.Require(t, "helm", "HELM_BIN")
	reg := startRegistry(t)
	repoRoot, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	relDir := t.TempDir() // the release's RELEASE_DIR

	// The image, built as `make image-push` builds it, on the local base.
	start := time.Now()
	cfg := imagebuild.Config{
		Version: version, Revision: "0123456789abcdef0123456789abcdef01234567",
		Source: "https://github.com/kubecost-s3-exporter/kubecost-s3-exporter", Licenses: imagebuild.License,
		Created: time.Unix(1700000000, 0).UTC(), Base: imagebuild.LocalBase,
		ModuleDir: repoRoot, BinDir: relDir,
		Notices: filepath.Join(repoRoot, "THIRD_PARTY_NOTICES"), LicenseFile: filepath.Join(repoRoot, "LICENSE"),
	}
	res, err := imagebuild.Build(t.Context(), slog.New(slog.NewTextHandler(io.Discard, nil)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	imageRepo := reg + "/kubecost-s3-exporter"
	pushed, err := imagebuild.Push(t.Context(), res.Index, res.SBOM, imageRepo+":"+version, imageRepo+":latest")
	if err != nil {
		t.Fatal(err)
	}
	digest := pushed.Digest
	t.Logf("built and pushed %s@%s in %s", imageRepo, digest, time.Since(start).Round(time.Second))

	t.Run("a re-run pushes nothing; other bytes under the tag fail before any push", func(t *testing.T) {
		checkRepush(t, imageRepo, res)
	})
	t.Run("index: both platforms, user, entrypoint, labels, the binaries", func(t *testing.T) {
		checkIndex(t, imageRepo+":"+version, digest, cfg)
	})
	t.Run("make bump-base rewrites the base pin to the digest the tag names", func(t *testing.T) {
		checkBumpBase(t, imageRepo+":"+version, digest)
	})
	t.Run("SBOM: OCI 1.1 artifact read through the referrers fallback tag, valid SPDX 2.3", func(t *testing.T) {
		checkSBOM(t, reg, imageRepo, digest, res)
	})

	// The chart, packaged and pushed as `make chart-push` does, with the
	// pushed repository as its default image.
	chart, err := chartpack.Package(filepath.Join(repoRoot, "chart"), chartpack.Options{
		Version: chartVersion, AppVersion: version, ImageRepository: imageRepo, Created: cfg.Created,
	})
	if err != nil {
		t.Fatal(err)
	}
	chartRepo := "oci://" + reg + "/charts"
	chartDigest, _, err := chart.Push(chartRepo, cfg.Created, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("chart: a re-run pushes nothing; another package under the version fails", func(t *testing.T) {
		checkChartRepush(t, chart, chartRepo, chartDigest, repoRoot, cfg.Created)
	})
	writeReleaseDir(t, relDir, digest.String(), chartDigest.String(), chart, res)
	cosign := tooltest.Require(t, "cosign", "COSIGN_BIN")
	fulcio := newFakeFulcio(t)
	rc := releaseCheck{repoRoot: repoRoot, imageRepo: imageRepo, chartRepo: chartRepo, cosign: cosign, fulcio: fulcio}
	t.Run("make release-check: a re-run finds both published, unsigned; a rebuild with other bytes fails", func(t *testing.T) {
		rc.check(t, "absent")
	})
	sr := signedRelease{
		repoRoot: repoRoot, relDir: relDir, imageRepo: imageRepo, digest: digest.String(),
		chartRepo: chartRepo, chartDigest: chartDigest.String(), res: res, fulcio: fulcio,
	}
	t.Run("signatures by hand with a key, or by another workflow, do not count as release.yml's", func(t *testing.T) {
		checkOtherSigners(t, cosign, sr, rc)
	})
	t.Run("make sign; cosign verifies signatures, the SBOM attestation and SHA256SUMS under the identity; tampering fails", func(t *testing.T) {
		checkSigned(t, cosign, sr)
		t.Run("make release-check then finds every signature", func(t *testing.T) {
			rc.check(t, "present")
		})
	})

	t.Run("chart installed from the registry runs the pushed image by default", func(t *testing.T) {
		checkInstall(t, helm, reg, imageRepo, digest.String())
	})
}

// checkBumpBase runs `make bump-base` in a copy of the source with the
// pushed index standing in for distroless: the FROM line of
// release/base/Dockerfile (where Dependabot looks) then names the tag at
// the digest it names in the registry, and the Makefile's RELEASE_BASE
// reads it.
func checkBumpBase(t *testing.T, tag string, digest v1.Hash) {
	dir := filepath.Join(t.TempDir(), "src")
	copySource(t, dir)
	run(t, nil, false, "make", "-C", dir, "bump-base", "BASE_TAG="+tag)
	data, err := os.ReadFile(filepath.Join(dir, "release/base/Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	want := "\nFROM " + tag + "@" + digest.String() + "\n"
	if !strings.Contains(string(data), want) {
		t.Errorf("release/base/Dockerfile has no line %q after make bump-base", strings.TrimSpace(want))
	}
	out := run(t, nil, false, "make", "-s", "-C", dir, "-n", "image", "IMAGE_BASE=release", "VERSION="+version)
	if !strings.Contains(out, "-base "+tag+"@"+digest.String()+" ") {
		t.Errorf("make image does not build on the bumped base:\n%s", out)
	}
}

// checkRepush: pushing the same index again writes nothing; an index with
// other bytes under the same tag stops before any write, and the tag still
// names the release.
func checkRepush(t *testing.T, imageRepo string, res *imagebuild.Result) {
	again, err := imagebuild.Push(t.Context(), res.Index, res.SBOM, imageRepo+":"+version, imageRepo+":latest")
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Skipped) != 2 {
		t.Errorf("re-pushing the same index rewrote tags: skipped only %v", again.Skipped)
	}
	other := mutate.Annotations(res.Index, map[string]string{"rebuilt": "differently"}).(v1.ImageIndex)
	_, err = imagebuild.Push(t.Context(), other, res.SBOM, imageRepo+":new-tag", imageRepo+":"+version)
	if !errors.Is(err, imagebuild.ErrTagMoved) {
		t.Fatalf("pushing other bytes under %s: %v, want ErrTagMoved", version, err)
	}
	for _, tag := range []string{version, "new-tag"} {
		ref, _ := name.NewTag(imageRepo + ":" + tag)
		d, err := remote.Head(ref, remote.WithContext(t.Context()))
		switch {
		case tag == version && (err != nil || d.Digest != again.Digest):
			t.Errorf("%s moved to %v (%v)", tag, d, err)
		case tag == "new-tag" && err == nil:
			t.Errorf("the failed push wrote %s before failing", tag)
		}
	}
}

func checkChartRepush(t *testing.T, chart *chartpack.Chart, chartRepo string, chartDigest v1.Hash, repoRoot string, created time.Time) {
	d, was, err := chart.Push(chartRepo, created, remote.WithContext(t.Context()))
	if err != nil || !was || d != chartDigest {
		t.Errorf("re-push: %s already there %v, %v; want %s, true", d, was, err, chartDigest)
	}
	other, err := chartpack.Package(filepath.Join(repoRoot, "chart"), chartpack.Options{
		Version: chartVersion, AppVersion: version, ImageRepository: "elsewhere.example/kse", Created: created,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Push(chartRepo, created, remote.WithContext(t.Context())); !errors.Is(err, imagebuild.ErrTagMoved) {
		t.Errorf("pushing another package as %s: %v, want ErrTagMoved", chartVersion, err)
	}
}

// releaseCheck runs the workflow's step before any push.
type releaseCheck struct {
	repoRoot, imageRepo, chartRepo, cosign string
	fulcio                                 *fakeFulcio
}

// check: the same build finds image, SBOM and chart published, and the
// signatures as signed says: verified by cosign under release.yml's
// identity at the tag, a fake Fulcio the trust root (what the release plan
// reads); a build of other bytes (another creation time) fails, naming the
// tag.
func (rc releaseCheck) check(t *testing.T, signed string) {
	got := rc.state(t)
	want := "image=present\nimage-sbom=present\nchart=present\nimage-signature=" + signed + "\nsbom-attestation=" + signed +
		"\nchart-signature=" + signed + "\n"
	if got != want {
		t.Errorf("state = %q; want %q", got, want)
	}
	dir := t.TempDir()
	out := run(t, []string{"COSIGN_BIN=" + rc.cosign}, true, "make", rc.vars(dir, "1700000001")...)
	if !strings.Contains(out, imagebuild.ErrTagMoved.Error()) {
		t.Errorf("release-check of other bytes failed for another reason:\n%s", tail(out, 2000))
	}
}

func (rc releaseCheck) vars(dir, epoch string) []string {
	return []string{"-C", rc.repoRoot, "release-check", "VERSION=" + version, "CHART_VERSION=" + chartVersion,
		"REVISION=0123456789abcdef0123456789abcdef01234567", "SOURCE_DATE_EPOCH=" + epoch,
		"IMAGE_REPO=" + rc.imageRepo, "CHART_REPO=" + rc.chartRepo, "RELEASE_DIR=" + dir, "OCI_LAYOUT=" + filepath.Join(dir, "layout"),
		"SOURCE_URL=https://github.com/kubecost-s3-exporter/kubecost-s3-exporter", "SIGNER_REPO=o/r",
		"COSIGN_TRUST_FLAGS=" + rc.fulcio.trustFlags(), "COSIGN_REGISTRY_FLAGS=--allow-http-registry --allow-insecure-registry"}
}

// state runs make release-check and returns the state it wrote.
func (rc releaseCheck) state(t *testing.T) string {
	dir := t.TempDir()
	run(t, []string{"COSIGN_BIN=" + rc.cosign}, false, "make", rc.vars(dir, "1700000000")...)
	got, err := os.ReadFile(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// writeReleaseDir leaves in relDir what `make image-push chart-push
// release-assets` leave for `make sign`.
func writeReleaseDir(t *testing.T, relDir, digest, chartDigest string, chart *chartpack.Chart, res *imagebuild.Result) {
	if _, err := imagebuild.WriteFiles(relDir, version, res.SBOM); err != nil {
		t.Fatal(err)
	}
	for f, data := range map[string]string{
		"image.digest": digest + "\n", "chart.digest": chartDigest + "\n", chart.FileName(): string(chart.Archive),
	} {
		if err := os.WriteFile(filepath.Join(relDir, f), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func helmHome(t *testing.T) []string {
	dir := t.TempDir()
	return []string{
		"HELM_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"HELM_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"HELM_DATA_HOME=" + filepath.Join(dir, "data"),
	}
}

// checkIndex pulls the index back by tag and checks what a node would run.
func checkIndex(t *testing.T, tag string, want v1.Hash, cfg imagebuild.Config) {
	ref, err := name.ParseReference(tag)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := idx.Digest(); d != want {
		t.Fatalf("tag %s names %s, pushed %s", tag, d, want)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range im.Manifests {
		if d.Platform != nil {
			platforms = append(platforms, d.Platform.OS+"/"+d.Platform.Architecture)
		}
	}
	slices.Sort(platforms)
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Fatalf("index platforms %v, want linux/amd64 and linux/arm64", platforms)
	}
	for _, d := range im.Manifests {
		p := d.Platform.OS + "/" + d.Platform.Architecture
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		c := cf.Config
		if cf.Architecture != d.Platform.Architecture || cf.OS != "linux" {
			t.Errorf("%s: config says %s/%s", p, cf.OS, cf.Architecture)
		}
		if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{imagebuild.BinaryPath}) || !slices.Equal(c.Cmd, []string{"run"}) {
			t.Errorf("%s: user %q entrypoint %q cmd %q", p, c.User, c.Entrypoint, c.Cmd)
		}
		for k, v := range map[string]string{
			"org.opencontainers.image.source":   cfg.Source,
			"org.opencontainers.image.version":  version,
			"org.opencontainers.image.revision": cfg.Revision,
			"org.opencontainers.image.licenses": cfg.Licenses,
		} {
			if c.Labels[k] != v {
				t.Errorf("%s: label %s = %q, want %q", p, k, c.Labels[k], v)
			}
		}
		files := extract(t, img)
		for _, f := range []string{"bin/sh", "usr/bin/sh", "bin/busybox"} {
			if _, ok := files[f]; ok {
				t.Errorf("%s: the image has a shell, %s", p, f)
			}
		}
		if !strings.Contains(string(files[strings.TrimPrefix(imagebuild.CABundle, "/")]), "BEGIN CERTIFICATE") {
			t.Errorf("%s: no CA bundle at %s", p, imagebuild.CABundle)
		}
		if !strings.Contains(string(files["etc/passwd"]), ":65532:65532:") {
			t.Errorf("%s: /etc/passwd names no user 65532", p)
		}
		for name, src := range map[string]string{"LICENSE": cfg.LicenseFile, "THIRD_PARTY_NOTICES": cfg.Notices} {
			want, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if got := files[strings.TrimPrefix(imagebuild.DocDir, "/")+"/"+name]; string(got) != string(want) {
				t.Errorf("%s: %s/%s is not the repository's %s (%d bytes)", p, imagebuild.DocDir, name, name, len(got))
			}
		}
		bin := files[strings.TrimPrefix(imagebuild.BinaryPath, "/")]
		checkBinary(t, p, bin)
	}
}

// checkBinary runs the amd64 binary (the test machine's) and reads the
// arm64 one's ELF header: static, and for the right machine.
func checkBinary(t *testing.T, platform string, bin []byte) {
	path := filepath.Join(t.TempDir(), "kubecost-s3-exporter")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: binary: %v", platform, err)
	}
	defer f.Close()
	wantMachine := map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}[platform]
	if f.Machine != wantMachine {
		t.Errorf("%s: ELF machine %v, want %v", platform, f.Machine, wantMachine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s: the binary is dynamically linked (has an interpreter)", platform)
		}
	}
	if platform == "linux/amd64" {
		out := run(t, nil, false, path, "version")
		if !strings.Contains(out, version) {
			t.Errorf("kubecost-s3-exporter version printed %q, want %s", out, version)
		}
	}
}

// extract returns the regular files of the image's flattened filesystem.
func extract(t *testing.T, img v1.Image) map[string][]byte {
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		if h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink {
			files[name] = nil
			continue
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[name] = b
		}
	}
}

// checkInstall installs the chart from the registry on a real API server,
// with the image by digest, and checks every pod spec names that digest.
func checkInstall(t *testing.T, helm, reg, imageRepo, digest string) {
	k := kubetest.Start(t)
	k.AddNode(t, "node-a")
	k.CreateNamespace(t, "kse")
	env := append(helmHome(t), "KUBECONFIG="+k.Kubeconfig)
	// No image.repository: the chart's default is the repository it was
	// released with (IMAGE_REPO). The digest pins the run to the signed bytes.
	out := run(t, env, false, helm, "install", "kse", "oci://"+reg+"/charts/kubecost-s3-exporter",
		"--version", chartVersion, "--plain-http", "-n", "kse", "--wait", "--timeout", "60s",
		"--set", "exporter.clusterId="+clusterARN, "--set", "exporter.s3BucketName=cost-archive",
		"--set", "image.digest="+digest)
	if !strings.Contains(out, "CHART VERSION: "+chartVersion) && !strings.Contains(out, "STATUS: deployed") {
		t.Errorf("helm install output:\n%s", out)
	}
	want := imageRepo + "@" + digest
	var cj struct {
		Spec struct {
			JobTemplate struct {
				Spec struct {
					Template corev1.PodTemplateSpec
				}
			}
		}
	}
	k.Must(t, http.MethodGet, "/apis/batch/v1/namespaces/kse/cronjobs/kse-kubecost-s3-exporter", nil, &cj)
	specs := map[string]corev1.PodSpec{"CronJob": cj.Spec.JobTemplate.Spec.Template.Spec}
	jobs := k.Jobs(t, "kse", "app.kubernetes.io/instance=kse")
	if len(jobs) != 1 {
		t.Fatalf("want the one export Job, got %d", len(jobs))
	}
	specs["Job "+jobs[0].Name] = jobs[0].Spec.Template.Spec
	var pods []corev1.Pod
	kubetest.Eventually(t, 60*time.Second, "the export pod", func() (bool, string) {
		pods = k.Pods(t, "kse", "app.kubernetes.io/instance=kse")
		return len(pods) == 1, ""
	})
	specs["Pod "+pods[0].Name] = pods[0].Spec
	for where, s := range specs {
		if len(s.Containers) == 0 {
			t.Errorf("%s: no container", where)
		}
		for _, c := range append(s.InitContainers, s.Containers...) {
			if c.Image != want {
				t.Errorf("%s: container %s runs %q, want exactly %q", where, c.Name, c.Image, want)
			}
		}
	}
}
