package release_test

import (
	"archive/tar"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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
// push image and chart, sign both, pull them back, install from the
// registry. The steps share the pushed artifacts, so they run in order.
func TestRegistryRoundTrip(t *testing.T) {
	helm := tooltest.Require(t, "helm", "HELM_BIN")
	reg := startRegistry(t)
	repoRoot, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}

	// The image, built as `make image-push` builds it, on the local base.
	start := time.Now()
	cfg := imagebuild.Config{
		Version: version, Revision: "0123456789abcdef0123456789abcdef01234567",
		Source: "https://github.com/kubecost-s3-exporter/kubecost-s3-exporter", Licenses: "NOASSERTION",
		Created: time.Unix(1700000000, 0).UTC(), Base: imagebuild.LocalBase,
		ModuleDir: repoRoot, BinDir: t.TempDir(),
	}
	res, err := imagebuild.Build(t.Context(), slog.New(slog.NewTextHandler(io.Discard, nil)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	imageRepo := reg + "/kubecost-s3-exporter"
	digest, err := imagebuild.Push(t.Context(), res.Index, res.SBOM, imageRepo+":"+version, imageRepo+":latest")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built and pushed %s@%s in %s", imageRepo, digest, time.Since(start).Round(time.Second))

	t.Run("index: both platforms, user, entrypoint, labels, the binaries", func(t *testing.T) {
		checkIndex(t, imageRepo+":"+version, digest, cfg)
	})
	t.Run("SBOM attached as a referrer of the index", func(t *testing.T) {
		checkSBOM(t, imageRepo, digest)
	})

	// The chart, packaged and pushed as the release does.
	chartDir := t.TempDir()
	helmEnv := helmHome(t)
	out := run(t, helmEnv, false, helm, "package", filepath.Join(repoRoot, "chart"), "--version", chartVersion, "--app-version", version, "-d", chartDir)
	tgz := filepath.Join(chartDir, "kubecost-s3-exporter-"+chartVersion+".tgz")
	if _, err := os.Stat(tgz); err != nil {
		t.Fatalf("helm package wrote no %s: %v\n%s", tgz, err, out)
	}
	out = run(t, helmEnv, false, helm, "push", tgz, "oci://"+reg+"/charts", "--plain-http")
	m := regexp.MustCompile(`Digest: (sha256:[0-9a-f]{64})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("helm push printed no digest:\n%s", out)
	}
	chartRef := reg + "/charts/kubecost-s3-exporter"
	chartDigest := m[1]

	t.Run("cosign: image and chart signed offline, verified, a re-pointed tag fails", func(t *testing.T) {
		cosign := tooltest.Require(t, "cosign", "COSIGN_BIN")
		checkSignatures(t, cosign, imageRepo, digest.String(), chartRef, chartDigest, res)
	})

	t.Run("chart installed from the registry runs the pushed digest", func(t *testing.T) {
		checkInstall(t, helm, reg, imageRepo, digest.String())
	})
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

// checkSBOM finds the SPDX document among the index's referrers.
func checkSBOM(t *testing.T, repo string, digest v1.Hash) {
	ref, err := name.NewDigest(repo + "@" + digest.String())
	if err != nil {
		t.Fatal(err)
	}
	refs, err := remote.Referrers(ref, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	im, err := refs.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if d.ArtifactType != imagebuild.SBOMMediaType {
			continue
		}
		img, err := remote.Image(ref.Context().Digest(d.Digest.String()), remote.WithContext(t.Context()))
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("SBOM artifact: %d layers, %v", len(layers), err)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		var doc struct {
			SPDXVersion string
			Packages    []struct{ Name, VersionInfo string }
		}
		if err := json.NewDecoder(rc).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range doc.Packages {
			names = append(names, p.Name)
		}
		if doc.SPDXVersion != "SPDX-2.3" || !slices.Contains(names, "github.com/aws/aws-sdk-go-v2/service/s3") {
			t.Errorf("SBOM %s with packages %v", doc.SPDXVersion, names)
		}
		for _, n := range names {
			if forbidden(n) {
				t.Errorf("SBOM lists %s, a test-only module", n)
			}
		}
		return
	}
	t.Fatalf("no %s referrer of %s among %d", imagebuild.SBOMMediaType, ref, len(im.Manifests))
}

// checkSignatures signs with a key pair made here; the password reaches
// cosign through its environment only. No transparency log: signing and
// verifying are offline.
func checkSignatures(t *testing.T, cosign, imageRepo, digest, chartRef, chartDigest string, res *imagebuild.Result) {
	idx := res.Index
	dir := t.TempDir()
	env := []string{"COSIGN_PASSWORD=test-only-password", "COSIGN_YES=true", "HOME=" + dir, "TUF_ROOT=" + filepath.Join(dir, "tuf")}
	key, pub := filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	run(t, env, false, cosign, "generate-key-pair", "--output-key-prefix", filepath.Join(dir, "cosign"))
	insecure := []string{"--allow-http-registry", "--allow-insecure-registry"}
	sign := func(ref string) {
		run(t, env, false, cosign, append([]string{"sign", "--key", key, "--tlog-upload=false", ref}, insecure...)...)
	}
	verify := func(ref string, wantErr bool) string {
		return run(t, env, wantErr, cosign, append([]string{"verify", "--key", pub, "--insecure-ignore-tlog=true", ref}, insecure...)...)
	}
	sign(imageRepo + "@" + digest)
	sign(chartRef + "@" + chartDigest)
	verify(imageRepo+"@"+digest, false)
	verify(imageRepo+":"+version, false)
	verify(chartRef+"@"+chartDigest, false)
	verify(chartRef+":"+chartVersion, false)

	// The SBOM as a signed attestation too, as `make sign` makes it.
	sbom := filepath.Join(dir, "sbom.spdx.json")
	if err := os.WriteFile(sbom, res.SBOM, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, env, false, cosign, append([]string{"attest", "--key", key, "--tlog-upload=false", "--type", "spdxjson", "--predicate", sbom, imageRepo + "@" + digest}, insecure...)...)
	out := run(t, env, false, cosign, append([]string{"verify-attestation", "--key", pub, "--insecure-ignore-tlog=true", "--type", "spdxjson", imageRepo + "@" + digest}, insecure...)...)
	if !strings.Contains(out, `"payloadType":"application/vnd.in-toto+json"`) {
		t.Errorf("verify-attestation printed no in-toto envelope:\n%s", tail(out, 2000))
	}

	// Re-point the tag at an index nobody signed: verification by tag fails.
	tampered := mutate.Annotations(idx, map[string]string{"tampered": "true"}).(v1.ImageIndex)
	tag, err := name.NewTag(imageRepo + ":" + version)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, tampered, remote.WithContext(t.Context())); err != nil {
		t.Fatal(err)
	}
	out = verify(imageRepo+":"+version, true)
	if !strings.Contains(out, "no signatures found") && !strings.Contains(out, "no matching signatures") {
		t.Errorf("verifying the re-pointed tag failed for another reason:\n%s", out)
	}
	// Put the signed index back for the install.
	if err := remote.WriteIndex(tag, idx, remote.WithContext(t.Context())); err != nil {
		t.Fatal(err)
	}
}

// checkInstall installs the chart from the registry on a real API server,
// with the image by digest, and checks every pod spec names that digest.
func checkInstall(t *testing.T, helm, reg, imageRepo, digest string) {
	k := kubetest.Start(t)
	k.AddNode(t, "node-a")
	k.CreateNamespace(t, "kse")
	env := append(helmHome(t), "KUBECONFIG="+k.Kubeconfig)
	out := run(t, env, false, helm, "install", "kse", "oci://"+reg+"/charts/kubecost-s3-exporter",
		"--version", chartVersion, "--plain-http", "-n", "kse", "--wait", "--timeout", "60s",
		"--set", "exporter.clusterId="+clusterARN, "--set", "exporter.s3BucketName=cost-archive",
		"--set", "image.repository="+imageRepo, "--set", "image.digest="+digest)
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
