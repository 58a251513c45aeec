package imagebuild

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Exists says whether ref names a manifest; a 404 is false, any other
// failure an error (a re-run must not take "unreachable" for "absent").
func Exists(ref name.Reference, opts ...remote.Option) (bool, error) {
	_, err := remote.Head(ref, opts...)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("imagebuild: %s: %w", ref, err)
	}
	return true, nil
}

// ImageState is what of one build the registry holds already. Whether it
// is signed is not read from cosign's tags (sha256-<hex>.sig, .att), which
// anyone with a key can write: kse-release registry-state asks cosign
// whether a signature verifies under the release workflow's identity.
type ImageState struct {
	Image bool // every tag names this index (a tag naming other bytes is ErrTagMoved)
	SBOM  bool // the SBOM artifact whose subject is the index
}

// Lines are the state as the release's plan reads it (package releaseplan).
func (s ImageState) Lines() string {
	return fmt.Sprintf("image=%s\nimage-sbom=%s\n", presence(s.Image), presence(s.SBOM))
}

func presence(ok bool) string {
	if ok {
		return "present"
	}
	return "absent"
}

// Presence is the word Lines writes for ok, for callers writing other
// facts in the same format (the chart's).
func Presence(ok bool) string { return presence(ok) }

// Inspect looks up the index under tags (one repository) and its SBOM. It
// writes nothing.
func Inspect(idx v1.ImageIndex, sbom []byte, tags []name.Tag, opts ...remote.Option) (ImageState, error) {
	var st ImageState
	if len(tags) == 0 {
		return st, fmt.Errorf("imagebuild: inspect: no tag")
	}
	digest, err := idx.Digest()
	if err != nil {
		return st, err
	}
	st.Image = true
	for _, tag := range tags {
		same, err := CheckTag(tag, digest, opts...)
		if err != nil {
			return st, err
		}
		st.Image = st.Image && same
	}
	repo := tags[0].Context()
	desc, err := indexDescriptor(idx)
	if err != nil {
		return st, err
	}
	raw, err := SBOMManifest(desc, sbom)
	if err != nil {
		return st, err
	}
	sd, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return st, err
	}
	st.SBOM, err = Exists(repo.Digest(sd.String()), opts...)
	return st, err
}

// ParseTags splits a comma-separated list of tags of one repository.
func ParseTags(list string) ([]name.Tag, error) {
	var tags []name.Tag
	for _, r := range strings.Split(list, ",") {
		tag, err := name.NewTag(strings.TrimSpace(r))
		if err != nil {
			return nil, fmt.Errorf("imagebuild: %s: %w", r, err)
		}
		if len(tags) > 0 && tag.Context() != tags[0].Context() {
			return nil, fmt.Errorf("imagebuild: %s: not in repository %s", r, tags[0].Context())
		}
		tags = append(tags, tag)
	}
	return tags, nil
}
