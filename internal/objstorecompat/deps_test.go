package objstorecompat

import (
	"os/exec"
	"strings"
	"testing"
)

// TestObjstoreStaysOutOfTheBinary: objstore is a test-only dependency; no
// command links it (nor, through it, minio-go's or go-kit's packages).
func TestObjstoreStaysOutOfTheBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../cmd/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/thanos-io/") || strings.HasPrefix(pkg, "github.com/go-kit/") {
			t.Errorf("a command links %s", pkg)
		}
	}
}
