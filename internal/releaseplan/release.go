package releaseplan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/ghrelease"
)

// GitHub is the part of the releases API the publish step uses
// (*ghrelease.Client).
type GitHub interface {
	Releases(ctx context.Context, tag string) ([]*ghrelease.Release, error)
	CreateDraft(ctx context.Context, tag string, prerelease bool) (*ghrelease.Release, error)
	Upload(ctx context.Context, r *ghrelease.Release, name string, data []byte) error
	Delete(ctx context.Context, a ghrelease.Asset) error
	Download(ctx context.Context, a ghrelease.Asset) ([]byte, error)
	Publish(ctx context.Context, r *ghrelease.Release, prerelease bool) (*ghrelease.Release, error)
}

// BlobVerifier says whether a bundle is a signature of a file by the
// release identity (Cosign.VerifyBlob).
type BlobVerifier interface {
	VerifyBlob(ctx context.Context, file, bundle string) error
}

// TagPattern is a release tag: "v" and a SemVer 2.0.0 version
// (https://semver.org/spec/v2.0.0.html, items 2 and 9: no leading zeros in
// a number, dot-separated identifiers of [0-9A-Za-z-] after a "-" for a
// pre-release), without build metadata ("+..."), which neither an image
// tag nor an OCI chart tag can hold. release.yml's first step refuses any
// other tag with the same expression (release/tag_test.go holds the two
// equal); it is POSIX ERE and RE2 alike.
const TagPattern = `^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
	`(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?$`

var tagPattern = regexp.MustCompile(TagPattern)

// CheckTag refuses a tag that is not a release tag (TagPattern), saying
// what one is.
func CheckTag(tag string) error {
	if !tagPattern.MatchString(tag) {
		return fmt.Errorf("releaseplan: tag %q is not a release tag: want v and a SemVer version, vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-PRERELEASE (no leading zeros, no +build metadata)", tag)
	}
	return nil
}

// Prerelease says whether tag is a SemVer pre-release (v1.2.3-rc.1, any
// -suffix): marked pre-release on GitHub, never Latest. A tag that is not
// a release tag is not a release at all; callers refuse it with CheckTag.
func Prerelease(tag string) bool {
	m := tagPattern.FindStringSubmatch(tag)
	return m != nil && m[4] != ""
}

// ReleaseFacts is what the tag's GitHub release holds, by content: every
// asset's SHA-256 is of the bytes downloaded from it, and the signature
// bundle counts only when it verifies against this build's SHA256SUMS
// under the release identity. Unknown are the assets that are no file of
// this build (install.sh, Bin beside bin), Broken the assets whose upload
// did not complete (state "starter"): neither is downloaded.
type ReleaseFacts struct {
	Exists, Draft, Immutable, Prerelease bool
	Assets                               map[string]string // name -> SHA-256 hex of its bytes
	SumsSigned                           bool
	Unknown, Broken                      []string
}

func (f ReleaseFacts) published() bool { return f.Exists && !f.Draft }

// ReleaseActions is what the publish step does to the GitHub release, in
// this order: create a draft, delete the draft's assets with other bytes,
// those that are no file of this build and those whose upload did not
// complete, upload, check every asset, publish.
type ReleaseActions struct {
	CreateDraft bool
	Delete      []string // assets of the draft that are no file of this build, or half-uploaded ones of no file
	Replace     []string // assets whose bytes are not this build's (a draft's), or whose upload did not complete
	Upload      []string // in name order, Replace included
	SignSums    bool     // no bundle of the release verifies: sign SHA256SUMS
	Publish     bool     // the release is a draft (or absent) or wrongly not a pre-release
}

// DecideRelease compares the release with want (file name -> this build's
// SHA-256; the signature bundle is not in want: it counts by verifying).
// A draft is nobody's download yet: what is wrong in it is replaced, and
// what is no file of this build is deleted, so it does not ship. A
// published release is: an asset there with other bytes, one that is no
// file of this build, or a bundle that does not verify, stops the run
// rather than change what users may have pulled; so does a missing asset
// of an immutable release, which nothing can add to. An asset whose
// upload did not complete was never downloadable: it is deleted and
// uploaded again, in a draft or a mutable published release (an
// immutable one stops the run).
func DecideRelease(want map[string]File, f ReleaseFacts, prerelease bool) (ReleaseActions, error) {
	var a ReleaseActions
	if f.published() && len(f.Unknown) > 0 {
		return a, fmt.Errorf("releaseplan: the published release holds %s, which %s no file of this build; it is not deleted, since users may have downloaded it: delete it by hand, or tag a new version", strings.Join(f.Unknown, ", "), map[bool]string{true: "is", false: "are"}[len(f.Unknown) == 1])
	}
	if f.published() && f.Immutable && len(f.Broken) > 0 {
		return a, fmt.Errorf("releaseplan: the published release is immutable and holds %s, whose upload did not complete: GitHub changes nothing in it; tag a new version", strings.Join(f.Broken, ", "))
	}
	for _, name := range f.Broken {
		if _, ok := want[name]; !ok && name != BundleFile {
			a.Delete = append(a.Delete, name)
		}
	}
	a.Delete = append(a.Delete, f.Unknown...)
	slices.Sort(a.Delete)
	a.CreateDraft = !f.Exists
	a.SignSums = !f.SumsSigned
	a.Publish = !f.published() || (prerelease && !f.Prerelease)
	names := sortedNames(want)
	if a.SignSums {
		names = append(names, BundleFile)
	}
	for _, name := range names {
		have, ok := f.Assets[name]
		switch {
		case slices.Contains(f.Broken, name):
			a.Replace = append(a.Replace, name)
		case ok && name != BundleFile && have == want[name].SHA256:
			continue
		case ok && f.published() && name == BundleFile:
			return a, fmt.Errorf("releaseplan: the published release's %s does not verify as a signature of this build's %s by the release workflow; it is not replaced, since users may have downloaded it: delete it by hand, or tag a new version", name, SumsFile)
		case ok && f.published():
			return a, fmt.Errorf("releaseplan: the published release's %s (sha256 %s) is not this build's (%s); it is not replaced, since users may have downloaded it: delete it by hand, or tag a new version", name, have, want[name].SHA256)
		case ok:
			a.Replace = append(a.Replace, name)
		case f.published() && f.Immutable:
			return a, fmt.Errorf("releaseplan: the published release is immutable and lacks %s: GitHub adds no asset to it; tag a new version", name)
		}
		a.Upload = append(a.Upload, name)
	}
	return a, nil
}

// GatherRelease reads the tag's release: each asset named in want, and the
// signature bundle, is downloaded and hashed; the bundle is verified
// against dir's SHA256SUMS. It returns nil for a tag without a release.
func GatherRelease(ctx context.Context, gh GitHub, v BlobVerifier, tag, dir string, want map[string]File) (ReleaseFacts, *ghrelease.Release, error) {
	f := ReleaseFacts{Assets: map[string]string{}}
	all, err := gh.Releases(ctx, tag)
	if err != nil {
		return f, nil, err
	}
	r, err := pickRelease(tag, all)
	if err != nil || r == nil {
		return f, r, err
	}
	f.Exists, f.Draft, f.Immutable, f.Prerelease = true, r.Draft, r.Immutable, r.Prerelease
	for _, asset := range r.Assets {
		_, known := want[asset.Name]
		known = known || asset.Name == BundleFile
		switch {
		case !asset.Uploaded():
			f.Broken = append(f.Broken, asset.Name)
			continue
		case !known:
			f.Unknown = append(f.Unknown, asset.Name)
			continue
		}
		data, err := gh.Download(ctx, asset)
		if err != nil {
			return f, r, err
		}
		sum := sha256.Sum256(data)
		f.Assets[asset.Name] = hex.EncodeToString(sum[:])
		if asset.Name == BundleFile {
			f.SumsSigned = verifyBundle(ctx, v, dir, data) == nil
		}
	}
	slices.Sort(f.Unknown)
	slices.Sort(f.Broken)
	return f, r, nil
}

// pickRelease is the release of tag to check among all of them: the
// published one whenever there is one (a newer draft must not hide it:
// its bytes are the ones users have), else the one draft. Several drafts
// stop the run: which one a maintainer meant is theirs to say.
func pickRelease(tag string, all []*ghrelease.Release) (*ghrelease.Release, error) {
	var published, drafts []*ghrelease.Release
	for _, r := range all {
		if r.TagName != tag {
			continue
		}
		if r.Draft {
			drafts = append(drafts, r)
		} else {
			published = append(published, r)
		}
	}
	switch {
	case len(published) > 1:
		return nil, fmt.Errorf("releaseplan: tag %s has %d published releases; GitHub allows one: check the repository's releases by hand", tag, len(published))
	case len(published) == 1:
		return published[0], nil
	case len(drafts) > 1:
		ids := make([]string, len(drafts))
		for i, d := range drafts {
			ids[i] = fmt.Sprint(d.ID)
		}
		return nil, fmt.Errorf("releaseplan: tag %s has %d draft releases (ids %s): delete all but one by hand, then run again", tag, len(drafts), strings.Join(ids, ", "))
	case len(drafts) == 1:
		return drafts[0], nil
	}
	return nil, nil
}

// verifyBundle writes the release's bundle beside nothing of the build's
// (a temporary file) and verifies it against dir's SHA256SUMS.
func verifyBundle(ctx context.Context, v BlobVerifier, dir string, data []byte) error {
	tmp, err := os.CreateTemp("", "release-bundle-*.sigstore.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return v.VerifyBlob(ctx, filepath.Join(dir, SumsFile), tmp.Name())
}

// PublishRelease brings the tag's GitHub release to want: a draft is
// created (or the existing one found), the assets it lacks or holds with
// other bytes are uploaded, every asset is read back and checked, and only
// then is the release published; a pre-release tag is marked pre-release,
// never Latest. The signature bundle uploaded is dir's, made by this run's
// `make sign SIGN=sums`, and must verify before it is uploaded.
func PublishRelease(ctx context.Context, gh GitHub, v BlobVerifier, log io.Writer, tag, dir string, want map[string]File) error {
	if err := CheckTag(tag); err != nil {
		return err
	}
	pre := Prerelease(tag)
	facts, r, err := GatherRelease(ctx, gh, v, tag, dir, want)
	if err != nil {
		return err
	}
	acts, err := DecideRelease(want, facts, pre)
	if err != nil {
		return err
	}
	if acts.SignSums {
		bundle := filepath.Join(dir, BundleFile)
		if err := v.VerifyBlob(ctx, filepath.Join(dir, SumsFile), bundle); err != nil {
			return fmt.Errorf("releaseplan: no bundle of the release verifies, and this run's %s does not either (make sign SIGN=sums makes it): %w", bundle, err)
		}
	}
	if acts.CreateDraft {
		fmt.Fprintf(log, "release %s: creating the draft (pre-release %v)\n", tag, pre)
		if r, err = gh.CreateDraft(ctx, tag, pre); err != nil {
			return err
		}
	}
	for _, a := range r.Assets {
		why := ""
		switch {
		case !a.Uploaded() && (slices.Contains(acts.Replace, a.Name) || slices.Contains(acts.Delete, a.Name)):
			why = "its upload did not complete, state " + a.State
		case slices.Contains(acts.Replace, a.Name):
			why = "other bytes"
		case slices.Contains(acts.Delete, a.Name):
			why = "no file of this build"
		default:
			continue
		}
		fmt.Fprintf(log, "release %s: deleting %s (%s)\n", tag, a.Name, why)
		if err := gh.Delete(ctx, a); err != nil {
			return err
		}
	}
	for _, name := range acts.Upload {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("releaseplan: %w", err)
		}
		fmt.Fprintf(log, "release %s: uploading %s (%d bytes)\n", tag, name, len(data))
		if err := gh.Upload(ctx, r, name, data); err != nil {
			return err
		}
	}
	// Read everything back: what is published is what was checked.
	if facts, r, err = GatherRelease(ctx, gh, v, tag, dir, want); err != nil {
		return err
	}
	if r == nil {
		return fmt.Errorf("releaseplan: release %s: gone after the uploads", tag)
	}
	if left, err := DecideRelease(want, facts, pre); err != nil || len(left.Upload) > 0 || len(left.Delete) > 0 {
		return fmt.Errorf("releaseplan: release %s: after the uploads, still not this build's: upload %v, delete %v, %v", tag, left.Upload, left.Delete, err)
	}
	if !r.Draft && (!pre || r.Prerelease) {
		fmt.Fprintf(log, "release %s: published, every asset checked\n", tag)
		return nil
	}
	fmt.Fprintf(log, "release %s: every asset checked; publishing (pre-release %v)\n", tag, pre)
	_, err = gh.Publish(ctx, r, pre)
	return err
}

// LoadFiles reads named files of dir as want entries (the provenance
// bundles, which SHA256SUMS does not list).
func LoadFiles(dir string, names []string, into map[string]File) error {
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return fmt.Errorf("releaseplan: %w", err)
		}
		into[n] = fileOf(data)
	}
	return nil
}
