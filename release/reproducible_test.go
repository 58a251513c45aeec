package release_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/notices"

	"sigs.k8s.io/yaml"
)

// releaseVars are the make variables of a tagged release build that a
// clone cannot know: the version (the tag) and where it publishes.
// REVISION and SOURCE_DATE_EPOCH come from the clone's git, as in CI.
func releaseVars(imageRepo string) []string {
	return []string{
		"VERSION=" + version, "CHART_VERSION=" + chartVersion, "IMAGE_REPO=" + imageRepo,
		"SOURCE_URL=https://github.com/kubecost-s3-exporter/kubecost-s3-exporter",
	}
}

// TestReproducibleRelease builds every release file twice, with `make
// release-build`, in two git clones of one commit (the work tree as CI
// would check it out) at two paths, and compares them byte for byte: the
// binaries, the image (OCI layout: index, manifests, configs, layers, the
// SBOM artifact), the SBOM, the notices, the chart .tgz and SHA256SUMS.
// The second clone differs in what a rebuilder's machine may differ in:
// GOFLAGS=-buildvcs=true in the environment (the go command would stamp
// vcs.revision, vcs.time and vcs.modified), an untracked file (vcs.modified),
// GOAMD64=v3, umask 077 and the time zone. IMAGE_REPO is a fork's, and the
// packaged chart must say so.
func TestReproducibleRelease(t *testing.T) {
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	const fork = "registry.example.com/fork/kse"
	root := t.TempDir()
	origin, commit := snapshot(t, filepath.Join(root, "origin"))
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b", "elsewhere", "clone")}
	envs := [][]string{nil, {"GOFLAGS=-buildvcs=true", "GOAMD64=v3", "TZ=Pacific/Chatham"}}
	for i, d := range dirs {
		script := `umask 022; git clone -q "$1" "$2" && make -C "$2" release-build "${@:3}"`
		if i == 1 {
			script = `umask 077; git clone -q "$1" "$2" && echo scratch >"$2/notes.txt" && make -C "$2" release-build "${@:3}"`
		}
		cmd := exec.Command("bash", append([]string{"-c", script, "bash", origin, d}, releaseVars(fork)...)...)
		cmd.Env = append(os.Environ(), envs[i]...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("clone and make release-build in %s (env %q): %v\n%s", d, envs[i], err, tail(string(out), 4000))
		}
	}
	a, b := artifacts(t, dirs[0]), artifacts(t, dirs[1])
	names := compareBuilds(t, a, b)
	t.Logf("%d files byte-identical across the two clones; image %s, chart %s", len(names),
		strings.TrimSpace(string(a["bin/release/image.digest"])), strings.TrimSpace(string(a["bin/release/chart.digest"])))
	checkSums(t, a)
	checkChartImage(t, a["bin/release/kubecost-s3-exporter-"+chartVersion+".tgz"], fork)
	checkNoVCSStamp(t, filepath.Join(dirs[1], "bin/release/kubecost-s3-exporter_linux_amd64"))
	sbom := a["bin/release/kubecost-s3-exporter_"+version+".spdx.json"]
	if !strings.Contains(string(sbom), "/sbom/"+version+"/"+commit) {
		t.Errorf("the SBOM does not name the clone's commit %s (REVISION from git)", commit)
	}
	checkSBOMLicenses(t, sbom, a["bin/release/THIRD_PARTY_NOTICES"])
}

// checkSBOMLicenses: every library of the SBOM (the modules and the
// standard library) declares the licence THIRD_PARTY_NOTICES records for
// it, and the notices list no module the SBOM lacks.
func checkSBOMLicenses(t *testing.T, sbom, notes []byte) {
	ids, err := notices.Parse(notes)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Packages []struct{ Name, VersionInfo, LicenseDeclared, PrimaryPackagePurpose string }
	}
	if err := json.Unmarshal(sbom, &doc); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range doc.Packages {
		if p.PrimaryPackagePurpose != "LIBRARY" {
			continue
		}
		key := p.Name + " " + p.VersionInfo
		if p.Name == "stdlib" {
			key = "stdlib"
		}
		if want := ids[key]; p.LicenseDeclared != want || want == "" {
			t.Errorf("SBOM %s declares %q, THIRD_PARTY_NOTICES %q", key, p.LicenseDeclared, want)
		}
		seen++
	}
	if seen != len(ids) {
		t.Errorf("the SBOM lists %d libraries, THIRD_PARTY_NOTICES %d", seen, len(ids))
	}
}

// compareBuilds fails for every file that only one build made or that
// differs, and checks the build made every release file.
func compareBuilds(t *testing.T, a, b map[string][]byte) []string {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, want := range []string{
		"bin/release/kubecost-s3-exporter_linux_amd64", "bin/release/kubecost-s3-exporter_linux_arm64",
		"bin/release/kubecost-s3-exporter_" + version + ".spdx.json", "bin/release/THIRD_PARTY_NOTICES",
		"bin/release/kubecost-s3-exporter-" + chartVersion + ".tgz", "bin/release/SHA256SUMS",
		"bin/release/image.digest", "bin/release/chart.digest", ".cache/image/index.json",
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
			t.Errorf("%s differs between the two clones", n)
		}
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			t.Errorf("only the second clone made %s", n)
		}
	}
	// index, two manifests, two configs, two layers each (base and binary),
	// the SBOM artifact's manifest, empty config and document.
	if blobs < 10 {
		t.Errorf("the OCI layout has %d blobs, want the index, 2 manifests, 2 configs, their layers and the SBOM artifact", blobs)
	}
	return names
}

// snapshot commits the files git knows of the work tree (tracked, and new
// ones it does not ignore) as one commit of a new repository, with a fixed
// author and date: the commit CI would check out, without the local
// history or uncommitted state of .git.
func snapshot(t *testing.T, dir string) (string, string) {
	copySource(t, dir)
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "release"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return dir, strings.TrimSpace(string(out))
}

// checkNoVCSStamp: the binary built in a clone, with GOFLAGS=-buildvcs=true
// and an untracked file, records no vcs.* setting (the go command records
// -buildvcs only when it is not false).
func checkNoVCSStamp(t *testing.T, bin string) {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range bi.Settings {
		if strings.HasPrefix(s.Key, "vcs.") || (s.Key == "-buildvcs" && s.Value != "false") {
			t.Errorf("%s carries %s=%s", bin, s.Key, s.Value)
		}
	}
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
		t.Errorf("SHA256SUMS has %d lines, want 5 (notices, 2 binaries, SBOM, chart):\n%s", len(lines), files["bin/release/SHA256SUMS"])
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
