package imagebuild

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// EmptyMediaType is the OCI 1.1 empty descriptor's media type: the config
// of an artifact that has none, whose content is always emptyJSON.
const EmptyMediaType types.MediaType = "application/vnd.oci.empty.v1+json"

const emptyJSON = "{}"

// ErrTagMoved is returned when a tag already names another digest: a
// release is never overwritten with different bytes.
var ErrTagMoved = errors.New("the tag already names another digest")

// WriteLayout writes the index into an OCI image layout directory, which
// needs no registry: `make image` on a machine with only Go. The SBOM is
// written beside it as the same OCI 1.1 artifact Push attaches (its
// manifest, the empty config and the document as blobs, the manifest
// listed in index.json with its artifactType), so the layout holds what
// a push publishes and `oras`/`crane` can copy both from it.
func WriteLayout(dir string, idx v1.ImageIndex, sbom []byte) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("imagebuild: layout %s: %w", dir, err)
	}
	if err := p.AppendIndex(idx); err != nil {
		return fmt.Errorf("imagebuild: layout %s: %w", dir, err)
	}
	desc, err := indexDescriptor(idx)
	if err != nil {
		return err
	}
	raw, err := SBOMManifest(desc, sbom)
	if err != nil {
		return err
	}
	for _, b := range [][]byte{[]byte(emptyJSON), sbom, raw} {
		h, _, err := v1.SHA256(bytes.NewReader(b))
		if err != nil {
			return err
		}
		if err := p.WriteBlob(h, io.NopCloser(bytes.NewReader(b))); err != nil {
			return fmt.Errorf("imagebuild: layout %s: %w", dir, err)
		}
	}
	d, size, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	err = p.AppendDescriptor(v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: d, Size: size, ArtifactType: SBOMMediaType})
	if err != nil {
		return fmt.Errorf("imagebuild: layout %s: %w", dir, err)
	}
	return nil
}

// RemoteOptions are the options of every registry call: the context and
// the credentials of ~/.docker/config.json.
func RemoteOptions(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
}

// CheckTag says whether tag already names want. It returns false when the
// tag does not exist, true when it names want, and ErrTagMoved when it
// names anything else: a re-run of a release either finds its own bytes or
// stops before pushing.
func CheckTag(ref name.Tag, want v1.Hash, opts ...remote.Option) (bool, error) {
	desc, err := remote.Head(ref, opts...)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("imagebuild: check %s: %w", ref, err)
	}
	if desc.Digest != want {
		return false, fmt.Errorf("imagebuild: %s names %s, this build is %s: %w", ref, desc.Digest, want, ErrTagMoved)
	}
	return true, nil
}

// PushResult says what Push did.
type PushResult struct {
	Digest v1.Hash
	// Skipped lists the tags that already named this digest, which were
	// left alone.
	Skipped []string
}

// Push writes the index under every tag of refs (one repository) and
// attaches the SBOM to it as an OCI referrer. Before writing anything it
// checks every tag: a tag naming this digest is left alone, a tag naming
// another digest stops the push with ErrTagMoved.
func Push(ctx context.Context, idx v1.ImageIndex, sbom []byte, refs ...string) (PushResult, error) {
	return PushWith(idx, sbom, refs, RemoteOptions(ctx)...)
}

// PushWith is Push with explicit registry options.
func PushWith(idx v1.ImageIndex, sbom []byte, refs []string, opts ...remote.Option) (PushResult, error) {
	if len(refs) == 0 {
		return PushResult{}, fmt.Errorf("imagebuild: push: no reference")
	}
	digest, err := idx.Digest()
	if err != nil {
		return PushResult{}, err
	}
	res := PushResult{Digest: digest}
	var tags []name.Tag
	for i, r := range refs {
		tag, err := name.NewTag(r)
		if err != nil {
			return res, fmt.Errorf("imagebuild: push %s: %w", r, err)
		}
		if i > 0 && tag.Context() != tags[0].Context() {
			return res, fmt.Errorf("imagebuild: push %s: not in repository %s", r, tags[0].Context())
		}
		tags = append(tags, tag)
	}
	var todo []name.Tag
	for _, tag := range tags {
		same, err := CheckTag(tag, digest, opts...)
		if err != nil {
			return res, err
		}
		if same {
			res.Skipped = append(res.Skipped, tag.String())
		} else {
			todo = append(todo, tag)
		}
	}
	for _, tag := range todo {
		if err := remote.WriteIndex(tag, idx, opts...); err != nil {
			return res, fmt.Errorf("imagebuild: push %s: %w", tag, err)
		}
	}
	// Also when every tag was there: a run that stopped between the index
	// and its SBOM is completed, and an SBOM already there is not rewritten.
	if err := pushSBOM(tags[0].Context(), idx, sbom, opts); err != nil {
		return res, err
	}
	return res, nil
}

// SBOMManifest is the OCI 1.1 artifact manifest that attaches the SPDX
// document to the index: artifactType application/spdx+json, the empty
// config, the document as its one layer, the index as its subject.
func SBOMManifest(subject v1.Descriptor, sbom []byte) ([]byte, error) {
	cfg := static.NewLayer([]byte(emptyJSON), EmptyMediaType)
	layer := static.NewLayer(sbom, SBOMMediaType)
	cd, err := DescriptorOf(cfg, EmptyMediaType)
	if err != nil {
		return nil, err
	}
	ld, err := DescriptorOf(layer, SBOMMediaType)
	if err != nil {
		return nil, err
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  SBOMMediaType,
		Config:        cd,
		Layers:        []v1.Descriptor{ld},
		Subject:       &subject,
	}
	return json.Marshal(m)
}

// DescriptorOf is l's descriptor with media type mt, for manifests built
// by hand (the SBOM artifact here, the chart in package chartpack).
func DescriptorOf(l v1.Layer, mt types.MediaType) (v1.Descriptor, error) {
	d, err := l.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	size, err := l.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Digest: d, Size: size}, nil
}

// rawManifest is a manifest pushed as its bytes: go-containerregistry's
// image types always carry an image config, and the artifact has none.
type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (r rawManifest) RawManifest() ([]byte, error)        { return r.raw, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return r.mt, nil }

// RawManifest makes a manifest's bytes pushable with remote.Put.
func RawManifest(raw []byte, mt types.MediaType) remote.Taggable { return rawManifest{raw, mt} }

// pushSBOM uploads the empty config and the SPDX document, then the
// artifact manifest by digest. Registries with the referrers API list it
// there; for the others go-containerregistry keeps the referrers tag
// (sha256-<index hex>) up to date, which is what clients fall back to.
func pushSBOM(repo name.Repository, idx v1.ImageIndex, sbom []byte, opts []remote.Option) error {
	desc, err := indexDescriptor(idx)
	if err != nil {
		return err
	}
	raw, err := SBOMManifest(desc, sbom)
	if err != nil {
		return err
	}
	d, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	ref := repo.Digest(d.String())
	if _, err := remote.Head(ref, opts...); err == nil {
		return nil
	}
	for _, l := range []v1.Layer{static.NewLayer([]byte(emptyJSON), EmptyMediaType), static.NewLayer(sbom, SBOMMediaType)} {
		if err := remote.WriteLayer(repo, l, opts...); err != nil {
			return fmt.Errorf("imagebuild: push SBOM blob: %w", err)
		}
	}
	if err := remote.Put(ref, rawManifest{raw, types.OCIManifestSchema1}, opts...); err != nil {
		return fmt.Errorf("imagebuild: push SBOM %s: %w", ref, err)
	}
	return nil
}

func indexDescriptor(idx v1.ImageIndex) (v1.Descriptor, error) {
	d, err := idx.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	size, err := idx.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := idx.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Digest: d, Size: size}, nil
}

// WriteFiles writes the SBOM next to the binaries, for the release assets.
func WriteFiles(binDir, version string, sbom []byte) (string, error) {
	path := filepath.Join(binDir, "kubecost-s3-exporter_"+version+".spdx.json")
	if err := os.WriteFile(path, sbom, 0o644); err != nil {
		return "", fmt.Errorf("imagebuild: %w", err)
	}
	return path, nil
}
