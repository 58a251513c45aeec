package release_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
)

// mutation takes one check out: in a Go file (applied with go test
// -overlay, so the work tree is untouched) or in a copy of a workflow. The
// test named must then fail.
type mutation struct {
	name      string
	file      string      // repository-relative
	edits     [][2]string // old, new: each must change the file
	move      func(string) string
	pkg, test string // the package (./internal/releaseplan) or "release" (the workflows' tests), the -run pattern
	cosign    bool   // the test needs the pinned cosign
}

var mutations = []mutation{
	// The GitHub release, by content (internal/releaseplan, internal/ghrelease).
	{name: "a release file counts by name, not bytes", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"case ok && name != BundleFile && have == want[name].SHA256:", "case ok && name != BundleFile:"}},
		pkg:   "./internal/releaseplan", test: "TestDecideRelease|TestPublishRelease"},
	{name: "a signature bundle counts without verifying", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"f.SumsSigned = verifyBundle(ctx, v, dir, data) == nil", "f.SumsSigned = verifyBundle(ctx, v, dir, data) == nil || true"}},
		pkg:   "./internal/releaseplan", test: "TestPublishRelease"},
	{name: "a published release's other bytes are replaced", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"case ok && f.published():", "case ok && f.published() && false:"}},
		pkg:   "./internal/releaseplan", test: "TestDecideRelease|TestPublishRelease"},
	{name: "a published immutable release is uploaded to", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"case f.published() && f.Immutable:", "case false:"}},
		pkg:   "./internal/releaseplan", test: "TestDecideRelease|TestPublishRelease"},
	{name: "this run's bundle is uploaded unverified", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"if acts.SignSums {\n\t\tbundle :=", "if acts.SignSums && false {\n\t\tbundle :="}},
		pkg:   "./internal/releaseplan", test: "TestPublishRelease"},
	{name: "the assets are not read back before publishing", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"err != nil || len(left.Upload) > 0 {", "(err != nil || len(left.Upload) > 0) && false {"}},
		pkg:   "./internal/releaseplan", test: "TestPublishRelease"},
	{name: "a draft reads as no release", file: "internal/ghrelease/ghrelease.go",
		edits: [][2]string{{"if list[i].TagName == tag {", "if list[i].TagName == tag && !list[i].Draft {"}},
		pkg:   "./internal/releaseplan", test: "TestPublishRelease"},
	{name: "the release is created published, not a draft", file: "internal/ghrelease/ghrelease.go",
		edits: [][2]string{{`"draft": true, "prerelease": prerelease`, `"draft": false, "prerelease": prerelease`}},
		pkg:   "./internal/releaseplan", test: "TestPublishRelease"},
	{name: "a pre-release tag is published as a full release", file: "internal/ghrelease/ghrelease.go",
		edits: [][2]string{{`body := map[string]any{"draft": false, "prerelease": prerelease,`, `body := map[string]any{"draft": false, "prerelease": false,`}},
		pkg:   "./internal/releaseplan", test: "TestPublishRelease"},
	{name: "only -rc tags are pre-releases", file: "internal/releaseplan/release.go",
		edits: [][2]string{{`[0-9]+\.[0-9]+\.[0-9]+-` + "`", `[0-9]+\.[0-9]+\.[0-9]+-rc` + "`"}},
		pkg:   "./internal/releaseplan", test: "TestPrerelease"},
	{name: "SHA256SUMS counts as signed by the plan without its bundle verifying", file: "internal/releaseplan/plan.go",
		edits: [][2]string{{`{"sums", st.SumsSignature}`, `{"sums", true}`}},
		pkg:   "./internal/releaseplan", test: "TestDecideFromScratch"},
	// Signatures by identity: the real cosign, a fake Fulcio.
	{name: "a signature by any identity counts", file: "internal/releaseplan/verify.go",
		edits: [][2]string{{`"--certificate-identity", c.ID.Subject`, `"--certificate-identity-regexp", ".*"`}},
		pkg:   "release", test: "TestReleaseContent|TestRegistrySignaturesByIdentity", cosign: true},
	{name: "an image signature counts without verifying", file: "cmd/kse-release/main.go",
		edits: [][2]string{{`{"image-signature", v.VerifyImage(ctx, img)}`, `{"image-signature", nil}`}},
		pkg:   "release", test: "TestRegistrySignaturesByIdentity", cosign: true},
	// The workflows.
	{name: "provenance of another tag counts", file: ".github/workflows/build.yml",
		edits: [][2]string{{`--source-ref "$GITHUB_REF" \`, `\`}}, pkg: "release", test: "TestBuilderDryRun"},
	{name: "provenance by another workflow counts", file: ".github/workflows/build.yml",
		edits: [][2]string{{`--signer-workflow "$SIGNER" --source-ref`, `--source-ref`}}, pkg: "release", test: "TestBuilderDryRun"},
	{name: "the publish job's provenance bundles are of any tag", file: ".github/workflows/release.yml",
		edits: [][2]string{{`--source-ref "$GITHUB_REF" \`, `\`}}, pkg: "release", test: "TestPublishAttachesThisTagsProvenance"},
	{name: "the attest job does not hold the files to the rebuild", file: ".github/workflows/build.yml",
		edits: [][2]string{{"! diff -u rebuilt.sha256 built.sha256", "false"}, {`grep -qxF -- "$line" rebuilt.sha256 ||`, "true ||"}},
		pkg:   "release", test: "TestAttestHoldsSubjectsToTheRebuild"},
	{name: "the attest job does not hold the image digest to the rebuild", file: ".github/workflows/build.yml",
		edits: [][2]string{{`[ "$BUILT_IMAGE" != "$REBUILT_IMAGE" ]`, "false"}}, pkg: "release", test: "TestAttestHoldsSubjectsToTheRebuild"},
	{name: "the attest job does not hold the chart digest to the rebuild", file: ".github/workflows/build.yml",
		edits: [][2]string{{`[ "$BUILT_CHART" != "$REBUILT_CHART" ]`, "false"}}, pkg: "release", test: "TestAttestHoldsSubjectsToTheRebuild"},
	{name: "a tag off main is released", file: ".github/workflows/release.yml",
		edits: [][2]string{{`--is-ancestor "$commit" refs/remotes/origin/main; then`, `--is-ancestor "$commit" refs/remotes/origin/main || true; then`}},
		pkg:   "release", test: "TestTagMustBeOnMain"},
	{name: "the GitHub release is published before the signatures", file: ".github/workflows/release.yml",
		move: func(s string) string {
			i := strings.Index(s, "      - name: The GitHub release, published last")
			j := strings.Index(s, "      - name: Sign what has no signature")
			if i < 0 || j < 0 || j > i {
				return s
			}
			return s[:j] + s[i:] + s[j:i]
		}, pkg: "release", test: "TestReleaseWorkflowDryRun"},
}

// TestReleaseMutations: each content check of the release, taken out,
// makes the test that guards it fail; so every check is one a test holds.
func TestReleaseMutations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test once per mutation")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// The workflows' tests, compiled once; a mutated workflow is a copy.
	releaseTest := filepath.Join(t.TempDir(), "release.test")
	if out, err := exec.Command("go", "test", "-c", "-o", releaseTest, ".").CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			env := []string{}
			if m.cosign {
				env = append(env, "COSIGN_BIN="+tooltest.Require(t, "cosign", "COSIGN_BIN"))
			}
			orig, err := os.ReadFile(filepath.Join(root, m.file))
			if err != nil {
				t.Fatal(err)
			}
			mutated := string(orig)
			for _, e := range m.edits {
				if !strings.Contains(mutated, e[0]) {
					t.Fatalf("%s no longer has %q: update the mutation", m.file, e[0])
				}
				mutated = strings.Replace(mutated, e[0], e[1], 1)
			}
			if m.move != nil {
				mutated = m.move(mutated)
			}
			if mutated == string(orig) {
				t.Fatalf("the mutation changes nothing in %s", m.file)
			}
			var cmd *exec.Cmd
			switch {
			case strings.HasPrefix(m.file, ".github/workflows/"):
				dir := t.TempDir()
				copyDir(t, filepath.Join(root, ".github/workflows"), dir)
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(m.file)), []byte(mutated), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd = exec.Command(releaseTest, "-test.run", "^("+m.test+")$", "-test.count=1")
				cmd.Dir = "."
				env = append(env, "KSE_WORKFLOWS_DIR="+dir)
			default:
				overlay := overlayFile(t, filepath.Join(root, m.file), mutated)
				// GOFLAGS reaches the go build a test runs itself (kse-release).
				env = append(env, "GOFLAGS=-overlay="+overlay)
				pkg := m.pkg
				if pkg == "release" {
					pkg = "."
				}
				cmd = exec.Command("go", "test", "-count=1", "-run", "^("+m.test+")$", pkg)
				cmd.Dir = map[bool]string{true: ".", false: root}[pkg == "."]
			}
			cmd.Env = append(os.Environ(), env...)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "--- FAIL") {
				t.Errorf("with %q, %s still passes: the check guards nothing\n%s", m.name, m.test, tail(string(out), 1500))
			}
		})
	}
}

func overlayFile(t *testing.T, path, content string) string {
	dir := t.TempDir()
	repl := filepath.Join(dir, filepath.Base(path))
	if err := os.WriteFile(repl, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(map[string]map[string]string{"Replace": {path: repl}})
	if err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlay, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return overlay
}

func copyDir(t *testing.T, from, to string) {
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
