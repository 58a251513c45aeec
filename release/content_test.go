package release_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/ghfake"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
)

// contentRun is kse-release's GitHub steps, run as `make
// release-github-state` and `make release-publish` run them, against a
// fake GitHub and the real cosign, whose trust root is a fake Fulcio.
type contentRun struct {
	bin, cosign, dir string
	files            map[string]string
	fulcio           *fakeFulcio
	gh               *ghfake.Server
}

const provenanceAsset = "kubecost-s3-exporter_" + version + ".intoto.jsonl"

func newContentRun(t *testing.T, bin, cosign string, fulcio *fakeFulcio) *contentRun {
	c := &contentRun{bin: bin, cosign: cosign, dir: t.TempDir(), fulcio: fulcio, gh: ghfake.New("o/r")}
	t.Cleanup(c.gh.Close)
	c.files = releaseDir(t, c.dir)
	c.files[provenanceAsset] = `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}` + "\n"
	if err := os.WriteFile(filepath.Join(c.dir, provenanceAsset), []byte(c.files[provenanceAsset]), 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

// sign writes this run's SHA256SUMS.sigstore.json, as `make sign
// SIGN=sums` would, by identity.
func (c *contentRun) sign(t *testing.T, identity string) []byte {
	b := c.fulcio.bundle(t, identity, []byte(c.files["SHA256SUMS"]))
	if err := os.WriteFile(filepath.Join(c.dir, "SHA256SUMS.sigstore.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// assets are the release files as the published release must hold them.
func (c *contentRun) assets(bundle []byte) map[string][]byte {
	out := map[string][]byte{"SHA256SUMS.sigstore.json": bundle}
	for _, n := range append(strings.Fields(strings.ReplaceAll(c.files["SHA256SUMS"], "  ", " ")), "SHA256SUMS", provenanceAsset) {
		if data, ok := c.files[n]; ok {
			out[n] = []byte(data)
		}
	}
	return out
}

func (c *contentRun) kse(sub string, extra ...string) (string, error) {
	args := append([]string{sub, "-dir", c.dir, "-tag", version, "-repo", "o/r", "-cosign", c.cosign}, extra...)
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append(os.Environ(), "GITHUB_API_URL="+c.gh.URL, "GH_TOKEN=token", "GITHUB_SERVER_URL=https://github.com",
		"COSIGN_TRUST_FLAGS="+c.fulcio.trustFlags(), "COSIGN_BLOB_TRUST_FLAGS="+c.fulcio.blobTrustFlags(), "COSIGN_REGISTRY_FLAGS=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// state is github-state's sums-signature line, or its error.
func (c *contentRun) state(t *testing.T) (string, string, error) {
	out, err := c.kse("github-state", "-attach", provenanceAsset)
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "sums-signature="); ok {
			return v, out, err
		}
	}
	return "", out, err
}

// TestReleaseContent: the GitHub release's files count by their bytes and
// its signature bundle by cosign under release.yml's identity at the tag.
// Each state ends complete, or stops with a message before anything is
// pushed, and changes nothing a user may have pulled.
func TestReleaseContent(t *testing.T) {
	cosign := tooltest.Require(t, "cosign", "COSIGN_BIN")
	bin := buildKseRelease(t)
	fulcio := newFakeFulcio(t)
	id := releaseIdentity("o/r", version)

	t.Run("bundles: right identity verifies; another identity, another tag or garbage does not", func(t *testing.T) {
		for name, b := range map[string]struct {
			bundle func(*contentRun) []byte
			want   string
		}{
			"release.yml at the tag": {func(c *contentRun) []byte { return fulcio.bundle(t, id, []byte(c.files["SHA256SUMS"])) }, "present"},
			"release.yml at another tag": {func(c *contentRun) []byte {
				return fulcio.bundle(t, releaseIdentity("o/r", "v9.8.7-rc.0"), []byte(c.files["SHA256SUMS"]))
			}, "absent"},
			"build.yml at the tag": {func(c *contentRun) []byte {
				return fulcio.bundle(t, "https://github.com/o/r/.github/workflows/build.yml@refs/tags/"+version, []byte(c.files["SHA256SUMS"]))
			}, "absent"},
			"a fork's release.yml": {func(c *contentRun) []byte {
				return fulcio.bundle(t, releaseIdentity("x/r", version), []byte(c.files["SHA256SUMS"]))
			}, "absent"},
			"right identity, other sums": {func(c *contentRun) []byte { return fulcio.bundle(t, id, []byte("other\n")) }, "absent"},
			"garbage":                    {func(*contentRun) []byte { return []byte("garbage") }, "absent"},
		} {
			c := newContentRun(t, bin, cosign, fulcio)
			c.gh.Add(version, true, true, map[string][]byte{"SHA256SUMS.sigstore.json": b.bundle(c)})
			got, out, err := c.state(t)
			if err != nil || got != b.want {
				t.Errorf("%s: sums-signature=%s, %v; want %s\n%s", name, got, err, b.want, out)
			}
		}
	})

	t.Run("a draft with wrong bytes and a bundle by another identity is completed; immutable releases on; pre-release", func(t *testing.T) {
		c := newContentRun(t, bin, cosign, fulcio)
		c.gh.ImmutableReleases = true
		c.gh.Add(version, true, false, map[string][]byte{
			"THIRD_PARTY_NOTICES":      []byte("other notices"),
			"SHA256SUMS":               []byte(c.files["SHA256SUMS"]),
			"SHA256SUMS.sigstore.json": fulcio.bundle(t, releaseIdentity("o/r", "v9.8.7-rc.0"), []byte(c.files["SHA256SUMS"])),
		})
		if got, out, err := c.state(t); err != nil || got != "absent" {
			t.Fatalf("github-state: %s, %v\n%s", got, err, out)
		}
		bundle := c.sign(t, id)
		if out, err := c.kse("publish", "-attach", provenanceAsset); err != nil {
			t.Fatalf("publish: %v\n%s", err, out)
		}
		r, latest := c.gh.Get(version)
		if r.Draft || !r.Prerelease || latest || !r.Immutable {
			t.Errorf("release: draft %v prerelease %v latest %v immutable %v; want published, pre-release, not Latest, immutable", r.Draft, r.Prerelease, latest, r.Immutable)
		}
		got := map[string]string{}
		for _, a := range r.Assets {
			got[a.Name] = string(a.Data)
		}
		for n, data := range c.assets(bundle) {
			if got[n] != string(data) {
				t.Errorf("asset %s: %d bytes, not this build's", n, len(got[n]))
			}
		}
		if len(got) != len(c.assets(bundle)) {
			t.Errorf("assets %d, want %d", len(got), len(c.assets(bundle)))
		}
		if g, out, err := c.state(t); err != nil || g != "present" {
			t.Errorf("after publishing, github-state: %s, %v\n%s", g, err, out)
		}
		n := len(c.gh.Log)
		if out, err := c.kse("publish", "-attach", provenanceAsset); err != nil || len(c.gh.Log) != n {
			t.Errorf("a re-run of the published release: %v, wrote %q\n%s", err, c.gh.Log[n:], out)
		}
	})

	t.Run("pending provenance bundles: known and not yet compared; without them named, an asset of no file", func(t *testing.T) {
		c := newContentRun(t, bin, cosign, fulcio)
		all := c.assets(fulcio.bundle(t, id, []byte(c.files["SHA256SUMS"])))
		all[provenanceAsset] = []byte("bundles of an earlier run\n")
		c.gh.Add(version, false, true, all)
		if err := os.Remove(filepath.Join(c.dir, provenanceAsset)); err != nil {
			t.Fatal(err)
		}
		if out, err := c.kse("github-state", "-pending", provenanceAsset); err != nil || !strings.Contains(out, "release=published") {
			t.Errorf("github-state -pending of a published release holding the bundles: %v\n%s", err, out)
		}
		if out, err := c.kse("github-state"); err == nil || !strings.Contains(out, "holds "+provenanceAsset+", which is no file of this build") {
			t.Errorf("github-state without -pending: %v; want the bundles read as no file of the build\n%s", err, out)
		}
		if out, err := c.kse("github-state", "-pending", "SHA256SUMS"); err == nil || !strings.Contains(out, "is -pending and a file of the build") {
			t.Errorf("github-state -pending SHA256SUMS: %v; want refused\n%s", err, out)
		}
		d := newContentRun(t, bin, cosign, fulcio)
		d.gh.ImmutableReleases = true
		delete(all, provenanceAsset)
		d.gh.Add(version, false, true, all)
		if out, err := d.kse("github-state", "-pending", provenanceAsset); err == nil || !strings.Contains(out, "immutable and lacks "+provenanceAsset) {
			t.Errorf("github-state -pending of a published immutable release without the bundles: %v; want a stop\n%s", err, out)
		}
	})

	for _, s := range []struct {
		name   string
		immut  bool
		assets func(c *contentRun) map[string][]byte
		stop   string
	}{
		{"published with another file's bytes", false, func(c *contentRun) map[string][]byte {
			return map[string][]byte{"kubecost-s3-exporter_linux_amd64": []byte("other")}
		}, "users may have downloaded it"},
		{"published with a bundle by another identity", false, func(c *contentRun) map[string][]byte {
			return map[string][]byte{"SHA256SUMS.sigstore.json": fulcio.bundle(t, releaseIdentity("o/r", "v0.0.1"), []byte(c.files["SHA256SUMS"]))}
		}, "does not verify as a signature of this build's SHA256SUMS by the release workflow"},
		{"published with an asset that is no file of the build", false, func(c *contentRun) map[string][]byte {
			all := c.assets(fulcio.bundle(t, id, []byte(c.files["SHA256SUMS"])))
			all["install.sh"] = []byte("curl | sh")
			return all
		}, "holds install.sh, which is no file of this build"},
		{"published, immutable, without its bundle", true, func(c *contentRun) map[string][]byte {
			all := c.assets(nil)
			delete(all, "SHA256SUMS.sigstore.json")
			return all
		}, "immutable and lacks SHA256SUMS.sigstore.json"},
	} {
		t.Run(s.name+": github-state stops before anything is attested (the provenance bundles pending)", func(t *testing.T) {
			c := newContentRun(t, bin, cosign, fulcio)
			c.gh.ImmutableReleases = s.immut
			c.gh.Add(version, false, true, s.assets(c))
			if err := os.Remove(filepath.Join(c.dir, provenanceAsset)); err != nil {
				t.Fatal(err)
			}
			if out, err := c.kse("github-state", "-pending", provenanceAsset); err == nil || !strings.Contains(out, s.stop) {
				t.Errorf("github-state -pending: %v; want a stop saying %q\n%s", err, s.stop, out)
			}
		})
		t.Run(s.name+": github-state stops before anything is pushed, publish too", func(t *testing.T) {
			c := newContentRun(t, bin, cosign, fulcio)
			c.gh.ImmutableReleases = s.immut
			c.gh.Add(version, false, true, s.assets(c))
			if _, out, err := c.state(t); err == nil || !strings.Contains(out, s.stop) {
				t.Errorf("github-state: %v; want a stop saying %q\n%s", err, s.stop, out)
			}
			c.sign(t, id)
			if out, err := c.kse("publish", "-attach", provenanceAsset); err == nil || !strings.Contains(out, s.stop) || len(c.gh.Log) > 0 {
				t.Errorf("publish: %v, wrote %q; want a stop saying %q\n%s", err, c.gh.Log, s.stop, out)
			}
		})
	}
}
