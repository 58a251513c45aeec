package chartpack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"

	"sigs.k8s.io/yaml"
)

const chartDir = "../../chart"

var created = time.Unix(1700000000, 0).UTC()

type entry struct {
	hdr  *tar.Header
	data []byte
}

func untar(t *testing.T, tgz []byte) []entry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{h, b})
	}
}

func file(t *testing.T, es []entry, name string) []byte {
	t.Helper()
	for _, e := range es {
		if e.hdr.Name == "kubecost-s3-exporter/"+name {
			return e.data
		}
	}
	t.Fatalf("no %s in the package", name)
	return nil
}

// copyChart copies the chart to a fresh directory whose files all carry
// another mtime, as a second clone would.
func copyChart(t *testing.T, mtime time.Time) string {
	dir := filepath.Join(t.TempDir(), "somewhere", "chart")
	if err := os.CopyFS(dir, os.DirFS(chartDir)); err != nil {
		t.Fatal(err)
	}
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, mtime, mtime)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPackageReproducible: two copies of the chart with other paths and
// mtimes give the same bytes; every header is fixed.
func TestPackageReproducible(t *testing.T) {
	o := Options{Version: "1.2.3", AppVersion: "v1.2.3", Created: created}
	a, err := Package(copyChart(t, time.Now()), o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Package(copyChart(t, time.Unix(1, 0)), o)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Archive, b.Archive) {
		t.Fatal("two packages of one chart differ")
	}
	es := untar(t, a.Archive)
	var names []string
	for _, e := range es {
		h := e.hdr
		names = append(names, h.Name)
		if !h.ModTime.Equal(created) || h.Mode != 0o644 || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Typeflag != tar.TypeReg {
			t.Errorf("%s: mtime %s mode %o uid %d gid %d uname %q type %c", h.Name, h.ModTime, h.Mode, h.Uid, h.Gid, h.Uname, h.Typeflag)
		}
	}
	if names[0] != "kubecost-s3-exporter/Chart.yaml" || !slices.IsSorted(names[1:]) {
		t.Errorf("order %v: want Chart.yaml, then lexical", names)
	}
	gz, _ := gzip.NewReader(bytes.NewReader(a.Archive))
	if !gz.ModTime.IsZero() || gz.Name != "" {
		t.Errorf("gzip header carries time %s, name %q", gz.ModTime, gz.Name)
	}
	if c, _ := Package(chartDir, Options{Version: "1.2.3", AppVersion: "v1.2.3", Created: created.Add(time.Second)}); bytes.Equal(c.Archive, a.Archive) {
		t.Error("another creation time gave the same bytes: the time is not in the archive")
	}
}

// TestPackageSetsImage: the version, appVersion and image repository reach
// the packaged chart, and nothing else of values.yaml changes.
func TestPackageSetsImage(t *testing.T) {
	const repo = "registry.example.com/fork/kse"
	c, err := Package(chartDir, Options{Version: "2.0.0-rc.1", AppVersion: "v2.0.0-rc.1", ImageRepository: repo, Created: created})
	if err != nil {
		t.Fatal(err)
	}
	if c.FileName() != "kubecost-s3-exporter-2.0.0-rc.1.tgz" {
		t.Errorf("file name %s", c.FileName())
	}
	es := untar(t, c.Archive)
	var meta struct{ Name, Version, AppVersion string }
	if err := yaml.Unmarshal(file(t, es, "Chart.yaml"), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Name != "kubecost-s3-exporter" || meta.Version != "2.0.0-rc.1" || meta.AppVersion != "v2.0.0-rc.1" {
		t.Errorf("Chart.yaml %+v", meta)
	}
	values := file(t, es, "values.yaml")
	var v struct {
		Image struct{ Repository, Tag string }
	}
	if err := yaml.Unmarshal(values, &v); err != nil {
		t.Fatal(err)
	}
	if v.Image.Repository != repo || v.Image.Tag != "" {
		t.Errorf("image %+v", v.Image)
	}
	src, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	old := regexp.MustCompile(`(?m)^  repository: ghcr\.io/\S+$`)
	if got := old.ReplaceAllString(string(src), "  repository: "+repo); got != string(values) {
		t.Error("values.yaml changed beyond image.repository")
	}
	// The README names the fork's image wherever it named the default one,
	// and keeps the chart's own OCI repository.
	readme := string(file(t, es, "README.md"))
	const ghcr = "ghcr.io/kubecost-s3-exporter/kubecost-s3-exporter"
	if strings.Contains(readme, ghcr) || !strings.Contains(readme, "`"+repo+":<appVersion>`") || !strings.Contains(readme, `"`+repo+`"`) {
		t.Errorf("the packaged README still names %s or not %s", ghcr, repo)
	}
	srcReadme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.ReplaceAll(string(srcReadme), ghcr, repo) != readme {
		t.Error("README.md changed beyond the image repository")
	}
}

func TestReplaceRepository(t *testing.T) {
	in := "a `r.io/x/y:<v>` \"r.io/x/y\" r.io/x/y oci://r.io/x/y-chart r.io/x/yz (r.io/x/y)\nr.io/x/y"
	want := "a `f/k:<v>` \"f/k\" f/k oci://r.io/x/y-chart r.io/x/yz (f/k)\nf/k"
	if got := string(replaceRepository([]byte(in), "r.io/x/y", "f/k")); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestPackagedChartRendersImage reads the package back with helm: the
// default image is IMAGE_REPO:VERSION.
func TestPackagedChartRendersImage(t *testing.T) {
	helm := tooltest.Require(t, "helm", "HELM_BIN")
	const repo = "registry.example.com/fork/kse"
	c, err := Package(chartDir, Options{Version: "2.0.0", AppVersion: "v2.0.0", ImageRepository: repo, Created: created})
	if err != nil {
		t.Fatal(err)
	}
	tgz := filepath.Join(t.TempDir(), c.FileName())
	if err := os.WriteFile(tgz, c.Archive, 0o644); err != nil {
		t.Fatal(err)
	}
	out := runHelm(t, helm, "template", "kse", tgz, "--set", "exporter.clusterId=arn:aws:eks:us-east-1:111122223333:cluster/prod",
		"--set", "exporter.s3BucketName=cost-archive")
	images := regexp.MustCompile(`(?m)^\s+image: "?([^"\s]+)"?$`).FindAllStringSubmatch(out, -1)
	if len(images) == 0 {
		t.Fatalf("helm template printed no image:\n%s", out)
	}
	for _, m := range images {
		if m[1] != repo+":v2.0.0" {
			t.Errorf("image %s, want %s:v2.0.0", m[1], repo)
		}
	}
	if out := runHelm(t, helm, "lint", tgz, "--set", "exporter.clusterId=arn:aws:eks:us-east-1:111122223333:cluster/prod",
		"--set", "exporter.s3BucketName=cost-archive"); !strings.Contains(out, "0 chart(s) failed") {
		t.Errorf("helm lint:\n%s", out)
	}
}

// TestMatchesHelmPackage: the package holds the files `helm package`
// puts in it (the same .helmignore reading), with the same contents but
// Chart.yaml, which helm re-serialises.
func TestMatchesHelmPackage(t *testing.T) {
	helm := tooltest.Require(t, "helm", "HELM_BIN")
	dir := t.TempDir()
	runHelm(t, helm, "package", chartDir, "--version", "1.2.3", "--app-version", "v1.2.3", "-d", dir)
	ref, err := os.ReadFile(filepath.Join(dir, "kubecost-s3-exporter-1.2.3.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Package(chartDir, Options{Version: "1.2.3", AppVersion: "v1.2.3", Created: created})
	if err != nil {
		t.Fatal(err)
	}
	want, got := map[string][]byte{}, map[string][]byte{}
	for _, e := range untar(t, ref) {
		want[e.hdr.Name] = e.data
	}
	for _, e := range untar(t, ours.Archive) {
		got[e.hdr.Name] = e.data
	}
	for n, b := range want {
		g, ok := got[n]
		switch {
		case !ok:
			t.Errorf("helm packages %s, we do not", n)
		case !strings.HasSuffix(n, "/Chart.yaml") && !bytes.Equal(g, b):
			t.Errorf("%s differs from helm's", n)
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("we package %s, helm does not", n)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for name, o := range map[string]Options{
		"not SemVer":       {Version: "v1.2.3", AppVersion: "v1.2.3"},
		"no app version":   {Version: "1.2.3"},
		"quote in app":     {Version: "1.2.3", AppVersion: `v1"`},
		"bad repository":   {Version: "1.2.3", AppVersion: "v1.2.3", ImageRepository: "UPPER/Case"},
		"repository w tag": {Version: "1.2.3", AppVersion: "v1.2.3", ImageRepository: "reg.example/x:v1"},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%s: %+v passed", name, o)
		}
	}
	if err := (Options{Version: "1.2.3-rc.1", AppVersion: "v1.2.3-rc.1", ImageRepository: "127.0.0.1:5000/x"}).Validate(); err != nil {
		t.Errorf("a good one: %v", err)
	}
	if _, err := setImageRepository([]byte("other:\n  repository: x\n"), "r"); err == nil {
		t.Error("values without an image block: no error")
	}
}

func runHelm(t *testing.T, helm string, args ...string) string {
	t.Helper()
	cmd := exec.Command(helm, args...)
	dir := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(dir, "c"), "HELM_CACHE_HOME="+filepath.Join(dir, "k"), "HELM_DATA_HOME="+filepath.Join(dir, "d"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
