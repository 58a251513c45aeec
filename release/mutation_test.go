package release_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
		edits: [][2]string{{"err != nil || len(left.Upload) > 0 || len(left.Delete) > 0 {", "false {"}},
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
		edits: [][2]string{{"`(-(0|[1-9][0-9]*|", "`(-rc\\.(0|[1-9][0-9]*|"}},
		pkg:   "./internal/releaseplan", test: "TestPrerelease"},
	{name: "a tag that is not SemVer is released", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"if !tagPattern.MatchString(tag) {", "if false {"}},
		pkg:   "./internal/releaseplan", test: "TestCheckTag"},
	{name: "a backport takes Latest (make_latest true)", file: "internal/ghrelease/ghrelease.go",
		edits: [][2]string{{`latest := "legacy"`, `latest := "true"`}},
		pkg:   "./internal/releaseplan", test: "TestPublishRelease"},
	{name: "the tag filter is loosened to a prefix", file: "internal/ghrelease/ghrelease.go",
		edits: [][2]string{{"if list[i].TagName == tag {", "if strings.HasPrefix(list[i].TagName, tag) {"}},
		pkg:   "./internal/ghrelease", test: "TestReleases"},
	{name: "the first release of the tag is taken (a newer draft hides the published one)", file: "internal/ghrelease/ghrelease.go",
		edits: [][2]string{{"out = append(out, &list[i])", "return []*Release{&list[i]}, nil"}},
		pkg:   "./internal/releaseplan", test: "TestPublishRelease"},
	{name: "of several drafts the first is taken", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"case len(drafts) > 1:", "case false:"}},
		pkg:   "./internal/releaseplan", test: "TestPublishRelease"},
	{name: "assets that are no file of the build are not read", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"case !known:\n\t\t\tf.Unknown = append(f.Unknown, asset.Name)\n", "case !known:\n"}},
		pkg:   "./internal/releaseplan", test: "TestPublishRelease"},
	{name: "a draft's assets that are no file of the build ship", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"a.Delete = append(a.Delete, f.Unknown...)", ""}},
		pkg:   "./internal/releaseplan", test: "TestDecideRelease|TestPublishRelease"},
	{name: "a published release's assets that are no file of the build pass", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"if f.published() && len(f.Unknown) > 0 {", "if false {"}},
		pkg:   "./internal/releaseplan", test: "TestDecideRelease|TestPublishRelease"},
	{name: "a half-uploaded asset counts as uploaded", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"case !asset.Uploaded():", "case false:"}},
		pkg:   "./internal/releaseplan", test: "TestPublishRelease"},
	{name: "a half-uploaded file is not uploaded again", file: "internal/releaseplan/release.go",
		edits: [][2]string{{"case slices.Contains(f.Broken, name):\n\t\t\ta.Replace = append(a.Replace, name)\n", ""}},
		pkg:   "./internal/releaseplan", test: "TestDecideRelease|TestPublishRelease"},
	{name: "SHA256SUMS counts as signed by the plan without its bundle verifying", file: "internal/releaseplan/plan.go",
		edits: [][2]string{{`{"sums", st.SumsSignature}`, `{"sums", true}`}},
		pkg:   "./internal/releaseplan", test: "TestDecideFromScratch"},
	{name: "the check job's github-state reads a published release's provenance bundles as bytes to compare", file: "cmd/kse-release/main.go",
		edits: [][2]string{{"if have, ok := facts.Assets[n]; ok {", "if have, ok := facts.Assets[n]; ok && false {"}},
		pkg:   "release", test: "TestReleaseContent", cosign: true},
	{name: "the check job's github-state does not know the provenance bundles", file: ".github/workflows/release.yml",
		edits: [][2]string{{`make release-github-state PENDING="kubecost-s3-exporter_$VERSION.intoto.jsonl"`, "make release-github-state"}},
		pkg:   "release", test: "TestPublishChecksComeFirst"},
	{name: "the check job may write packages, which the docs say it only reads", file: ".github/workflows/release.yml",
		edits: [][2]string{{"      packages: read # this version's tags", "      packages: write # this version's tags"}},
		pkg:   "release", test: "TestReleaseDocsClaimOnlyWhatIsEnforced"},
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
	{name: "the publish job's provenance bundles are of any runner", file: ".github/workflows/release.yml",
		edits: [][2]string{{"--deny-self-hosted-runners --format json", "--format json"}}, pkg: "release", test: "TestPublishAttachesThisTagsProvenance"},
	{name: "the publish job's provenance bundles are of any predicate", file: ".github/workflows/release.yml",
		edits: [][2]string{{"--predicate-type https://slsa.dev/provenance/v1 --deny-self-hosted-runners --format json", "--deny-self-hosted-runners --format json"}},
		pkg:   "release", test: "TestWorkflowRules"},
	{name: "the publish job's signer is matched as a prefix (no @ref)", file: ".github/workflows/release.yml",
		edits: [][2]string{{"/.github/workflows/build.yml@${{ github.ref }}", "/.github/workflows/build.yml"}},
		pkg:   "release", test: "TestPublishAttachesThisTagsProvenance"},
	{name: "the publish job does not verify the bundles file it wrote", file: ".github/workflows/release.yml",
		edits: [][2]string{{`if ! gh attestation verify "$f" --bundle "$out"`, `if false && ! gh attestation verify "$f" --bundle "$out"`}},
		pkg:   "release", test: "TestPublishAttachesThisTagsProvenance"},
	{name: "the publish job runs without pipefail", file: ".github/workflows/release.yml",
		edits: [][2]string{{"defaults:\n  run:\n    shell: bash\n", ""}}, pkg: "release", test: "TestPipeStepsRunWithPipefail"},
	{name: "build.yml runs without pipefail", file: ".github/workflows/build.yml",
		edits: [][2]string{{"defaults:\n  run:\n    shell: bash\n", ""}}, pkg: "release", test: "TestPipeStepsRunWithPipefail"},
	{name: "the builder's skip counts a self-hosted runner's provenance", file: ".github/workflows/build.yml",
		edits: [][2]string{{"--deny-self-hosted-runners >/dev/null", ">/dev/null"}}, pkg: "release", test: "TestBuilderDryRun"},
	{name: "the builder's skip counts any predicate", file: ".github/workflows/build.yml",
		edits: [][2]string{{"--predicate-type https://slsa.dev/provenance/v1 --deny-self-hosted-runners >/dev/null", "--deny-self-hosted-runners >/dev/null"}},
		pkg:   "release", test: "TestWorkflowRules"},
	{name: "the builder's signer is matched as a prefix (no @ref)", file: ".github/workflows/build.yml",
		edits: [][2]string{{"/.github/workflows/build.yml@${{ github.ref }}", "/.github/workflows/build.yml"}}, pkg: "release", test: "TestBuilderDryRun"},
	{name: "an old gh verifies the provenance (publish)", file: ".github/workflows/release.yml",
		edits: [][2]string{{`GH_MIN: "2.97.0"`, `GH_MIN: "2.0.0"`}}, pkg: "release", test: "TestGhVersionChecked"},
	{name: "gh's version is printed, not checked (build)", file: ".github/workflows/build.yml",
		edits: [][2]string{{"nothing is verified with it\"\n            exit 1", "nothing is verified with it\""}}, pkg: "release", test: "TestGhVersionChecked"},
	{name: "the provenance bundles are checked after the push", file: ".github/workflows/release.yml",
		move: func(s string) string {
			i := strings.Index(s, "      # The provenance build.yml made for this tag, verified")
			j := strings.Index(s[max(i, 0):], "      - name: Log in to GHCR") + max(i, 0) // publish's, after the check job's
			k := strings.Index(s, "      - name: The GitHub release, published last")
			if i < 0 || j < i || k < j {
				return s
			}
			return s[:i] + s[j:k] + s[i:j] + s[k:]
		}, pkg: "release", test: "TestPublishChecksComeFirst"},
	// Every check that can stop the release before anything is attested,
	// pushed, signed or uploaded (TestPublishChecksComeFirst, across jobs).
	{name: "build.yml (and its attest job) does not need the check job", file: ".github/workflows/release.yml",
		edits: [][2]string{{"  build:\n    needs: [test, check]\n", "  build:\n    needs: test\n"}}, pkg: "release", test: "TestPublishChecksComeFirst"},
	{name: "the attest job needs neither build job", file: ".github/workflows/build.yml",
		edits: [][2]string{{"  attest:\n    needs: [build, rebuild]\n", "  attest:\n"}}, pkg: "release", test: "TestPublishChecksComeFirst"},
	{name: "the check job does not read the registry and the GitHub release", file: ".github/workflows/release.yml",
		edits: [][2]string{{"          make release-check\n          make release-github-state PENDING=\"kubecost-s3-exporter_$VERSION.intoto.jsonl\"\n          make -s release-plan SCOPE=publish STATE=bin/release/state\n", "          true\n"}},
		pkg:   "release", test: "TestPublishChecksComeFirst"},
	{name: "build.yml is given digests no check read", file: ".github/workflows/release.yml",
		edits: [][2]string{{"checked-sha256sums: ${{ needs.check.outputs.sha256sums }}", "checked-sha256sums: ${{ needs.test.outputs.sha256sums }}"}},
		pkg:   "release", test: "TestPublishChecksComeFirst"},
	{name: "the attest job signs before it compares the builds", file: ".github/workflows/build.yml",
		move: func(s string) string {
			i := strings.Index(s, "      - name: The subjects must be what the independent rebuild")
			j := strings.Index(s, "      - name: Provenance of the release files")
			k := strings.Index(s, "      - name: Provenance of the image index")
			if i < 0 || j < i || k < j {
				return s
			}
			return s[:i] + s[j:k] + s[i:j] + s[k:]
		}, pkg: "release", test: "TestPublishChecksComeFirst"},
	{name: "the attest job does not hold the files to the checked build", file: ".github/workflows/build.yml",
		edits: [][2]string{{"! diff -u checked.sha256 built.sha256", "false"}}, pkg: "release", test: "TestAttestHoldsSubjectsToTheRebuild"},
	{name: "the attest job does not hold the image digest to the checked build", file: ".github/workflows/build.yml",
		edits: [][2]string{{`[ "$BUILT_IMAGE" != "$CHECKED_IMAGE" ]`, "false"}}, pkg: "release", test: "TestAttestHoldsSubjectsToTheRebuild"},
	{name: "the attest job does not hold the chart digest to the checked build", file: ".github/workflows/build.yml",
		edits: [][2]string{{`[ "$BUILT_CHART" != "$CHECKED_CHART" ]`, "false"}}, pkg: "release", test: "TestAttestHoldsSubjectsToTheRebuild"},
	{name: "a tag that is not SemVer is built", file: ".github/workflows/release.yml",
		edits: [][2]string{{`if ! [[ "$GITHUB_REF_NAME" =~ $semver ]]; then`, `if false; then`}}, pkg: "release", test: "TestTagMustBeSemVer"},
	{name: "the workflow's tag expression is not anchored at the end", file: ".github/workflows/release.yml",
		edits: [][2]string{{`*))*)?$'`, `*))*)?'`}}, pkg: "release", test: "TestTagMustBeSemVer"},
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

// TestMutationsFailWithoutToolsInCI: with CI set, an entry of
// TestReleaseMutations whose tool is missing fails, rather than skipping:
// CI must never pass a mutation it did not run. Without CI it skips.
func TestMutationsFailWithoutToolsInCI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	i := slices.IndexFunc(mutations, func(m mutation) bool { return m.cosign })
	if i < 0 {
		t.Fatal("no mutation needs cosign")
	}
	name := strings.ReplaceAll(mutations[i].name, " ", "_")
	for ci, want := range map[string]string{"true": "--- FAIL", "": "--- SKIP"} {
		cmd := exec.Command("go", "test", "-count=1", "-v", "-run", "^TestReleaseMutations$/^"+regexp.QuoteMeta(name)+"$", ".")
		cmd.Env = append(os.Environ(), "CI="+ci, "COSIGN_BIN="+filepath.Join(t.TempDir(), "no-cosign"))
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), want+": TestReleaseMutations/"+name) {
			t.Errorf("CI=%q and no cosign: want %s of %s\n%s", ci, want, name, tail(string(out), 1500))
		}
	}
}
