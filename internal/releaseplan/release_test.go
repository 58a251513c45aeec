package releaseplan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/ghrelease"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/ghfake"
)

// stubVerifier accepts a bundle whose bytes are "signed-by ID sha256:HEX"
// of the file: the unit tests' cosign (release/ runs the real one with a
// local CA).
type stubVerifier struct{ id string }

func (v stubVerifier) VerifyBlob(_ context.Context, file, bundle string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(bundle)
	if err != nil {
		return err
	}
	if string(b) != stubBundle(v.id, data) {
		return errors.New("bundle does not verify")
	}
	return nil
}

func stubBundle(id string, data []byte) string {
	s := sha256.Sum256(data)
	return "signed-by " + id + " sha256:" + hex.EncodeToString(s[:])
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestDecideRelease: every state of a release, by content.
func TestDecideRelease(t *testing.T) {
	want := map[string]File{"SHA256SUMS": {SHA256: sum("sums")}, "bin": {SHA256: sum("bin")}}
	all := map[string]string{"SHA256SUMS": sum("sums"), "bin": sum("bin"), BundleFile: sum("bundle")}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range all {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		name  string
		facts ReleaseFacts
		pre   bool
		want  ReleaseActions
		stop  string
	}{
		{"no release", ReleaseFacts{}, false,
			ReleaseActions{CreateDraft: true, SignSums: true, Publish: true, Upload: []string{"SHA256SUMS", "bin", BundleFile}}, ""},
		{"published, complete", ReleaseFacts{Exists: true, Assets: all, SumsSigned: true}, false, ReleaseActions{}, ""},
		{"published pre-release not marked", ReleaseFacts{Exists: true, Assets: all, SumsSigned: true}, true, ReleaseActions{Publish: true}, ""},
		{"draft, complete", ReleaseFacts{Exists: true, Draft: true, Assets: all, SumsSigned: true}, false, ReleaseActions{Publish: true}, ""},
		{"draft, wrong bytes", ReleaseFacts{Exists: true, Draft: true, Assets: with("bin", sum("other")), SumsSigned: true}, false,
			ReleaseActions{Publish: true, Replace: []string{"bin"}, Upload: []string{"bin"}}, ""},
		{"draft, bundle that does not verify", ReleaseFacts{Exists: true, Draft: true, Assets: all}, false,
			ReleaseActions{Publish: true, SignSums: true, Replace: []string{BundleFile}, Upload: []string{BundleFile}}, ""},
		{"draft, missing file", ReleaseFacts{Exists: true, Draft: true, Assets: with("SHA256SUMS", ""), SumsSigned: true}, false,
			ReleaseActions{Publish: true, Upload: []string{"SHA256SUMS"}}, ""},
		{"published, wrong bytes", ReleaseFacts{Exists: true, Assets: with("bin", sum("other")), SumsSigned: true}, false, ReleaseActions{},
			"not this build's (" + sum("bin") + "); it is not replaced, since users may have downloaded it"},
		{"published, bundle that does not verify", ReleaseFacts{Exists: true, Assets: all}, false, ReleaseActions{},
			"does not verify as a signature of this build's SHA256SUMS by the release workflow; it is not replaced"},
		{"published, mutable, missing file", ReleaseFacts{Exists: true, Assets: with("bin", ""), SumsSigned: true}, false,
			ReleaseActions{Upload: []string{"bin"}}, ""},
		{"published, mutable, missing bundle", ReleaseFacts{Exists: true, Assets: with(BundleFile, "")}, false,
			ReleaseActions{SignSums: true, Upload: []string{BundleFile}}, ""},
		{"published, immutable, missing file", ReleaseFacts{Exists: true, Immutable: true, Assets: with("bin", ""), SumsSigned: true}, false, ReleaseActions{},
			"the published release is immutable and lacks bin"},
		{"published, immutable, missing bundle", ReleaseFacts{Exists: true, Immutable: true, Assets: with(BundleFile, "")}, false, ReleaseActions{},
			"immutable and lacks " + BundleFile},
		{"draft, assets of no file of the build", ReleaseFacts{Exists: true, Draft: true, Assets: all, SumsSigned: true, Unknown: []string{"install.sh", "Bin"}}, false,
			ReleaseActions{Publish: true, Delete: []string{"Bin", "install.sh"}}, ""},
		{"published, an asset of no file of the build", ReleaseFacts{Exists: true, Assets: all, SumsSigned: true, Unknown: []string{"install.sh"}}, false, ReleaseActions{},
			"the published release holds install.sh, which is no file of this build; it is not deleted, since users may have downloaded it"},
		{"draft, a half-uploaded file", ReleaseFacts{Exists: true, Draft: true, Assets: with("bin", ""), SumsSigned: true, Broken: []string{"bin"}}, false,
			ReleaseActions{Publish: true, Replace: []string{"bin"}, Upload: []string{"bin"}}, ""},
		{"draft, a half-uploaded asset of no file", ReleaseFacts{Exists: true, Draft: true, Assets: all, SumsSigned: true, Broken: []string{"notes.txt"}}, false,
			ReleaseActions{Publish: true, Delete: []string{"notes.txt"}}, ""},
		{"draft, a half-uploaded bundle", ReleaseFacts{Exists: true, Draft: true, Assets: with(BundleFile, ""), Broken: []string{BundleFile}}, false,
			ReleaseActions{Publish: true, SignSums: true, Replace: []string{BundleFile}, Upload: []string{BundleFile}}, ""},
		{"published, mutable, a half-uploaded file", ReleaseFacts{Exists: true, Assets: with("bin", ""), SumsSigned: true, Broken: []string{"bin"}}, false,
			ReleaseActions{Replace: []string{"bin"}, Upload: []string{"bin"}}, ""},
		{"published, immutable, a half-uploaded file", ReleaseFacts{Exists: true, Immutable: true, Assets: with("bin", ""), SumsSigned: true, Broken: []string{"bin"}}, false,
			ReleaseActions{}, "immutable and holds bin, whose upload did not complete"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecideRelease(want, c.facts, c.pre)
			if c.stop != "" {
				if err == nil || !strings.Contains(err.Error(), c.stop) {
					t.Fatalf("got %+v, %v; want a stop saying %q", got, err, c.stop)
				}
				return
			}
			if err != nil || got.CreateDraft != c.want.CreateDraft || got.SignSums != c.want.SignSums || got.Publish != c.want.Publish ||
				!slices.Equal(got.Replace, c.want.Replace) || !slices.Equal(got.Upload, c.want.Upload) || !slices.Equal(got.Delete, c.want.Delete) {
				t.Errorf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

const testID = "https://github.com/o/r/.github/workflows/release.yml@refs/tags/"

// releaseFixture is a build directory (SHA256SUMS, two files, this run's
// bundle) and a fake GitHub.
type releaseFixture struct {
	dir   string
	files map[string][]byte // what the release must hold, bundle included
	want  map[string]File
	gh    *ghfake.Server
	cl    *ghrelease.Client
}

func newFixture(t *testing.T, tag string) *releaseFixture {
	f := &releaseFixture{dir: t.TempDir(), files: map[string][]byte{"bin": []byte("binary"), "NOTICES": []byte("notices")}}
	sums := fmt.Sprintf("%s  NOTICES\n%s  bin\n", sum("notices"), sum("binary"))
	f.files[SumsFile] = []byte(sums)
	f.files[BundleFile] = []byte(stubBundle(testID+tag, []byte(sums)))
	for n, d := range f.files {
		if err := os.WriteFile(filepath.Join(f.dir, n), d, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"image.digest", "chart.digest"} {
		if err := os.WriteFile(filepath.Join(f.dir, n), []byte("sha256:11\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := LoadWant(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.want = w.Files
	f.gh = ghfake.New("o/r")
	t.Cleanup(f.gh.Close)
	f.cl = &ghrelease.Client{API: f.gh.URL, Repo: "o/r", Token: "t"}
	return f
}

func (f *releaseFixture) publish(t *testing.T, tag string) error {
	return PublishRelease(t.Context(), f.cl, stubVerifier{testID + tag}, io.Discard, tag, f.dir, f.want)
}

// complete: the release is published, holds exactly the build's files,
// and is marked as the tag says.
func (f *releaseFixture) complete(t *testing.T, tag string) {
	t.Helper()
	r, latest := f.gh.Get(tag)
	if r == nil || r.Draft {
		t.Fatalf("release %s: %+v, want published", tag, r)
	}
	got := map[string]string{}
	for _, a := range r.Assets {
		if _, dup := got[a.Name]; dup {
			t.Errorf("asset %s twice", a.Name)
		}
		got[a.Name] = string(a.Data)
	}
	for n, d := range f.files {
		if got[n] != string(d) {
			t.Errorf("asset %s = %q, want %q", n, got[n], d)
		}
	}
	for _, a := range r.Assets {
		if _, ok := f.files[a.Name]; !ok || a.State != "uploaded" {
			t.Errorf("the release holds %s (state %s), which is no file of this build", a.Name, a.State)
		}
	}
	if pre := Prerelease(tag); r.Prerelease != pre || (pre && latest) {
		t.Errorf("release %s: prerelease %v, latest %v", tag, r.Prerelease, latest)
	}
}

// TestPublishRelease: from every kind of state a failed run can leave, or
// a maintainer can make, one run ends in the complete release or stops
// with a message that says why, having changed nothing a user may have
// pulled.
func TestPublishRelease(t *testing.T) {
	t.Run("no release, immutable releases on: draft, upload, check, publish", func(t *testing.T) {
		f := newFixture(t, "v1.0.0")
		f.gh.ImmutableReleases = true
		if err := f.publish(t, "v1.0.0"); err != nil {
			t.Fatal(err)
		}
		f.complete(t, "v1.0.0")
		if r, latest := f.gh.Get("v1.0.0"); !r.Immutable || !latest {
			t.Errorf("immutable %v latest %v", r.Immutable, latest)
		}
		if i := slices.IndexFunc(f.gh.Log, func(s string) bool { return strings.HasPrefix(s, "patch") }); i != len(f.gh.Log)-1 {
			t.Errorf("publishing is not the last write: %q", f.gh.Log)
		}
		// A re-run of the complete release writes nothing.
		n := len(f.gh.Log)
		if err := f.publish(t, "v1.0.0"); err != nil || len(f.gh.Log) != n {
			t.Errorf("re-run: %v, wrote %q", err, f.gh.Log[n:])
		}
	})
	t.Run("a pre-release tag is marked pre-release, never Latest", func(t *testing.T) {
		f := newFixture(t, "v1.1.0-rc.1")
		if err := f.publish(t, "v1.1.0-rc.1"); err != nil {
			t.Fatal(err)
		}
		f.complete(t, "v1.1.0-rc.1")
	})
	t.Run("an existing draft with wrong bytes and a garbage bundle is found and completed", func(t *testing.T) {
		f := newFixture(t, "v1.0.0")
		f.gh.ImmutableReleases = true
		f.gh.Add("v1.0.0", true, false, map[string][]byte{"bin": []byte("other"), SumsFile: f.files[SumsFile], BundleFile: []byte("garbage")})
		if err := f.publish(t, "v1.0.0"); err != nil {
			t.Fatal(err)
		}
		f.complete(t, "v1.0.0")
		if slices.ContainsFunc(f.gh.Log, func(s string) bool { return strings.HasPrefix(s, "create") }) {
			t.Errorf("a second release was created beside the draft: %q", f.gh.Log)
		}
	})
	t.Run("a draft with a bundle signed by another identity gets this run's", func(t *testing.T) {
		f := newFixture(t, "v1.0.0")
		f.gh.Add("v1.0.0", true, false, map[string][]byte{BundleFile: []byte(stubBundle(testID+"v0.9.0", f.files[SumsFile]))})
		if err := f.publish(t, "v1.0.0"); err != nil {
			t.Fatal(err)
		}
		f.complete(t, "v1.0.0")
	})
	t.Run("a published mutable release missing a file gets it", func(t *testing.T) {
		f := newFixture(t, "v1.0.0")
		f.gh.Add("v1.0.0", false, false, map[string][]byte{SumsFile: f.files[SumsFile], BundleFile: f.files[BundleFile], "NOTICES": f.files["NOTICES"]})
		if err := f.publish(t, "v1.0.0"); err != nil {
			t.Fatal(err)
		}
		f.complete(t, "v1.0.0")
	})
	for _, c := range []struct {
		name   string
		immut  bool
		assets map[string][]byte
		stop   string
	}{
		{"published with wrong bytes", false, map[string][]byte{"bin": []byte("other")}, "users may have downloaded it"},
		{"published with a garbage bundle", false, map[string][]byte{BundleFile: []byte("garbage")}, "does not verify"},
		{"published immutable, missing a file", true, map[string][]byte{"bin": []byte("binary")}, "immutable and lacks"},
		{"published with an asset of no file of the build", false, map[string][]byte{"install.sh": []byte("curl | sh")}, "holds install.sh, which is no file of this build"},
		{"published with Bin beside bin", false, map[string][]byte{"bin": []byte("binary"), "Bin": []byte("binary")}, "holds Bin, which is no file of this build"},
	} {
		t.Run(c.name+": stops, changes nothing", func(t *testing.T) {
			f := newFixture(t, "v1.0.0")
			f.gh.ImmutableReleases = c.immut
			f.gh.Add("v1.0.0", false, false, c.assets)
			err := f.publish(t, "v1.0.0")
			if err == nil || !strings.Contains(err.Error(), c.stop) {
				t.Errorf("got %v, want a stop saying %q", err, c.stop)
			}
			if len(f.gh.Log) > 0 {
				t.Errorf("wrote %q before stopping", f.gh.Log)
			}
		})
	}
	t.Run("a draft's assets of no file of the build are deleted, a half-uploaded one is uploaded again", func(t *testing.T) {
		f := newFixture(t, "v1.0.0")
		r := f.gh.Add("v1.0.0", true, false, map[string][]byte{"install.sh": []byte("curl | sh"), "Bin": []byte("binary"), SumsFile: f.files[SumsFile]})
		f.gh.AddStarter(r, "bin", f.files["bin"])
		if err := f.publish(t, "v1.0.0"); err != nil {
			t.Fatal(err)
		}
		f.complete(t, "v1.0.0")
		for _, want := range []string{"delete v1.0.0 Bin", "delete v1.0.0 install.sh", "delete v1.0.0 bin", "upload v1.0.0 bin"} {
			if !slices.Contains(f.gh.Log, want) {
				t.Errorf("no %q in %q", want, f.gh.Log)
			}
		}
	})
	t.Run("a published mutable release's half-uploaded file is uploaded again", func(t *testing.T) {
		f := newFixture(t, "v1.0.0")
		r := f.gh.Add("v1.0.0", false, false, map[string][]byte{SumsFile: f.files[SumsFile], BundleFile: f.files[BundleFile], "NOTICES": f.files["NOTICES"]})
		f.gh.AddStarter(r, "bin", f.files["bin"])
		if err := f.publish(t, "v1.0.0"); err != nil {
			t.Fatal(err)
		}
		f.complete(t, "v1.0.0")
	})
	t.Run("a published release with a newer draft of its tag: the published one is checked", func(t *testing.T) {
		f := newFixture(t, "v1.0.0")
		f.gh.Add("v1.0.0", false, false, map[string][]byte{"bin": []byte("other")})
		f.gh.Add("v1.0.0", true, false, nil) // newer: first in the list
		if err := f.publish(t, "v1.0.0"); err == nil || !strings.Contains(err.Error(), "bin (sha256 "+sum("other")+") is not this build's") || len(f.gh.Log) > 0 {
			t.Errorf("got %v, wrote %q; want a stop on the published release's bin", err, f.gh.Log)
		}
		// Complete and published: the draft beside it changes nothing.
		g := newFixture(t, "v1.0.0")
		g.gh.Add("v1.0.0", false, false, g.files)
		g.gh.Add("v1.0.0", true, false, map[string][]byte{"bin": []byte("other")})
		if err := g.publish(t, "v1.0.0"); err != nil || len(g.gh.Log) > 0 {
			t.Errorf("got %v, wrote %q", err, g.gh.Log)
		}
		g.complete(t, "v1.0.0")
	})
	t.Run("two drafts of the tag stop the run, naming them", func(t *testing.T) {
		f := newFixture(t, "v1.0.0")
		a := f.gh.Add("v1.0.0", true, false, nil)
		b := f.gh.Add("v1.0.0", true, false, nil)
		err := f.publish(t, "v1.0.0")
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("2 draft releases (ids %d, %d)", b.ID, a.ID)) || len(f.gh.Log) > 0 {
			t.Errorf("got %v, wrote %q", err, f.gh.Log)
		}
	})
	t.Run("another tag's release is not this tag's", func(t *testing.T) {
		f := newFixture(t, "v1.0.0")
		f.gh.Add("v1.0.0-rc.1", true, true, map[string][]byte{"bin": []byte("rc")})
		f.gh.Add("v1.0.00", false, false, map[string][]byte{"bin": []byte("x")})
		if err := f.publish(t, "v1.0.0"); err != nil {
			t.Fatal(err)
		}
		f.complete(t, "v1.0.0")
		if rs := f.gh.Releases("v1.0.0-rc.1"); len(rs) != 1 || !rs[0].Draft || len(rs[0].Assets) != 1 {
			t.Errorf("the release candidate's draft changed: %+v", rs)
		}
	})
	t.Run("a backport does not take Latest from a newer version", func(t *testing.T) {
		f := newFixture(t, "v1.0.1")
		f.gh.Add("v1.1.0", false, false, nil)
		if err := f.publish(t, "v1.0.1"); err != nil {
			t.Fatal(err)
		}
		f.complete(t, "v1.0.1")
		if got := f.gh.Latest(); got != "v1.1.0" {
			t.Errorf("Latest is %s after publishing the backport v1.0.1; want v1.1.0", got)
		}
	})
	t.Run("an upload stored with other bytes stops the run before publishing", func(t *testing.T) {
		f := newFixture(t, "v1.0.0")
		f.gh.Mangle = func(name string, data []byte) []byte {
			if name == "bin" {
				return append(data, '!')
			}
			return data
		}
		err := f.publish(t, "v1.0.0")
		if r, _ := f.gh.Get("v1.0.0"); err == nil || !strings.Contains(err.Error(), "still not this build's") || r == nil || !r.Draft {
			t.Errorf("got %v, release %+v; want a stop with the release still a draft", err, r)
		}
	})
	t.Run("this run's bundle must verify before it is uploaded", func(t *testing.T) {
		f := newFixture(t, "v1.0.0")
		if err := os.WriteFile(filepath.Join(f.dir, BundleFile), []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f.publish(t, "v1.0.0"); err == nil || !strings.Contains(err.Error(), "does not either") || len(f.gh.Log) > 0 {
			t.Errorf("got %v, wrote %q", err, f.gh.Log)
		}
	})
}
