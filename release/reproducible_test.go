package release_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// releaseVars are the make variables of a tagged release build, given
// explicitly because the copies below have no .git.
func releaseVars(imageRepo string) []string {
	return []string{
		"VERSION=" + version, "CHART_VERSION=" + chartVersion,
		"REVISION=0123456789abcdef0123456789abcdef01234567", "SOURCE_DATE_EPOCH=1700000000",
		"BUILD_REF=refs/tags/" + version, "IMAGE_REPO=" + imageRepo,
		"SOURCE_URL=https://github.com/kubecost-s3-exporter/kubecost-s3-exporter",
		"BUILDER_ID=https://github.com/kubecost-s3-exporter/kubecost-s3-exporter/.github/workflows/release.yml@refs/tags/" + version,
		"WORKFLOW=.github/workflows/release.yml",
		"INVOCATION_ID=https://github.com/kubecost-s3-exporter/kubecost-s3-exporter/actions/runs/1/attempts/1",
	}
}

// TestReproducibleRelease builds every release file twice, with `make
// release-build`, in two copies of the source at two different paths, and
// compares them byte for byte: the binaries, the image (OCI layout: index,
// manifests, configs, layers), the SBOM, the provenance, the chart .tgz and
// SHA256SUMS. IMAGE_REPO is a fork's, and the packaged chart must say so.
func TestReproducibleRelease(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	const fork = "registry.example.com/fork/kse"
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b", "elsewhere", "clone")}
	for _, d := range dirs {
		copySource(t, d)
		cmd := exec.Command("make", append([]string{"-C", d, "release-build"}, releaseVars(fork)...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make release-build in %s: %v\n%s", d, err, tail(string(out), 4000))
		}
	}
	a, b := artifacts(t, dirs[0]), artifacts(t, dirs[1])
	var names []string
	for n := range a {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, want := range []string{
		"bin/release/kubecost-s3-exporter_linux_amd64", "bin/release/kubecost-s3-exporter_linux_arm64",
		"bin/release/kubecost-s3-exporter_" + version + ".spdx.json", "bin/release/kubecost-s3-exporter_" + version + ".provenance.json",
		"bin/release/kubecost-s3-exporter-" + chartVersion + ".tgz", "bin/release/SHA256SUMS", "bin/release/image.digest",
		".cache/image/index.json",
	} {
		if _, ok := a[want]; !ok {
			t.Errorf("the build made no %s (made %v)", want, names)
		}
	}
	blobs := 0
	for _, n := range names {
		if strings.HasPrefix(n, ".cache/image/blobs/") {
			blobs++
		}
		if !bytes.Equal(a[n], b[n]) {
			t.Errorf("%s differs between the two builds", n)
		}
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			t.Errorf("only the second build made %s", n)
		}
	}
	// index, two manifests, two configs, two layers each (base and binary).
	if blobs < 7 {
		t.Errorf("the OCI layout has %d blobs, want the index, 2 manifests, 2 configs and their layers", blobs)
	}
	t.Logf("%d files byte-identical across the two builds; image %s", len(names), strings.TrimSpace(string(a["bin/release/image.digest"])))
	checkSums(t, a)
	checkChartImage(t, a["bin/release/kubecost-s3-exporter-"+chartVersion+".tgz"], fork)
}

// copySource copies the files git tracks (and new ones it does not ignore)
// of the repository into dir, as a fresh clone would have them.
func copySource(t *testing.T, dir string) {
	out, err := exec.Command("git", "-C", "..", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (the test copies the source git knows)", err)
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join("..", rel)
		fi, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// artifacts reads every file under bin/release and .cache/image.
func artifacts(t *testing.T, dir string) map[string][]byte {
	files := map[string][]byte{}
	for _, sub := range []string{"bin/release", ".cache/image"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			files[filepath.ToSlash(rel)], err = os.ReadFile(p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// checkSums: SHA256SUMS names every release asset with its real digest.
func checkSums(t *testing.T, files map[string][]byte) {
	lines := strings.Split(strings.TrimSpace(string(files["bin/release/SHA256SUMS"])), "\n")
	if len(lines) != 5 {
		t.Errorf("SHA256SUMS has %d lines, want 5:\n%s", len(lines), files["bin/release/SHA256SUMS"])
	}
	for _, l := range lines {
		sum, name, ok := strings.Cut(l, "  ")
		data, exists := files["bin/release/"+name]
		if !ok || !exists {
			t.Errorf("SHA256SUMS line %q names no asset", l)
			continue
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			t.Errorf("SHA256SUMS: %s is %x, says %s", name, got, sum)
		}
	}
}

// checkChartImage reads the chart's values back: image.repository is the
// IMAGE_REPO the make run was given, and appVersion (the default tag) the
// version.
func checkChartImage(t *testing.T, tgz []byte, repo string) {
	gz, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var values struct {
		Image struct{ Repository, Tag string }
	}
	var meta struct{ AppVersion, Version string }
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		switch h.Name {
		case "kubecost-s3-exporter/values.yaml":
			err = yaml.Unmarshal(data, &values)
		case "kubecost-s3-exporter/Chart.yaml":
			err = yaml.Unmarshal(data, &meta)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if values.Image.Repository != repo || values.Image.Tag != "" || meta.AppVersion != version || meta.Version != chartVersion {
		t.Errorf("chart: image %+v, version %s, appVersion %s; want %s:%s by default", values.Image, meta.Version, meta.AppVersion, repo, version)
	}
}
