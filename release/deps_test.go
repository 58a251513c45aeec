package release_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testOnly are modules the tests and test tools need and the exporter must
// not: building the image must neither compile nor download them.
var testOnly = []string{
	"github.com/duckdb/",
	"github.com/minio/",
	"helm.sh/",
	"github.com/prometheus/prometheus",
	"github.com/prometheus-operator/",
	"github.com/hashicorp/hcl",
	"github.com/google/go-containerregistry",
	"k8s.io/",
}

func forbidden(module string) bool {
	for _, p := range testOnly {
		if strings.HasPrefix(module, p) {
			return true
		}
	}
	return false
}

// TestImageBuildNeedsNoTestModules: the image builds only
// ./cmd/kubecost-s3-exporter, so its module set is the command's.
func TestImageBuildNeedsNoTestModules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "../cmd/kubecost-s3-exporter").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		seen[m] = true
	}
	if !seen["github.com/aws/aws-sdk-go-v2/service/s3"] {
		t.Fatalf("go list -deps names no S3 SDK; the listing is wrong:\n%s", out)
	}
	for m := range seen {
		if forbidden(m) {
			t.Errorf("./cmd/kubecost-s3-exporter depends on %s, a test-only module", m)
		}
	}
}

// TestImageBuildDownloadsNoTestModules loads the command's packages with an
// empty module cache that can fill only from the machine's module cache (as
// a file proxy), and checks no test-only module's source was fetched.
func TestImageBuildDownloadsNoTestModules(t *testing.T) {
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	proxy := filepath.Join(strings.TrimSpace(string(gomodcache)), "cache", "download")
	fresh := t.TempDir()
	cmd := exec.Command("go", "list", "-deps", "../cmd/kubecost-s3-exporter")
	cmd.Env = append(os.Environ(), "GOMODCACHE="+fresh, "GOPROXY=file://"+proxy, "GONOSUMDB=*", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go list with a fresh module cache: %v\n%s", err, out)
	}
	var zips []string
	err = filepath.WalkDir(filepath.Join(fresh, "cache", "download"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".zip") {
			rel, _ := filepath.Rel(filepath.Join(fresh, "cache", "download"), p)
			zips = append(zips, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(zips) == 0 {
		t.Fatal("nothing was downloaded; the check proves nothing")
	}
	for _, z := range zips {
		if forbidden(strings.ToLower(z)) {
			t.Errorf("loading ./cmd/kubecost-s3-exporter downloaded %s", z)
		}
	}
	t.Logf("%d module zips downloaded for the command", len(zips))
	// The module cache is read-only by design: go clean makes it removable.
	clean := exec.Command("go", "clean", "-modcache")
	clean.Env = append(os.Environ(), "GOMODCACHE="+fresh)
	if out, err := clean.CombinedOutput(); err != nil {
		t.Errorf("go clean -modcache: %v\n%s", err, out)
	}
}
