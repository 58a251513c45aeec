package imagebuild

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// WriteLayout writes the index into an OCI image layout directory, which
// needs no registry: `make image` on a machine with only Go.
func WriteLayout(dir string, idx v1.ImageIndex) error {
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
	return nil
}

// Push writes the index under every tag of refs (one repository) and
// attaches the SBOM to it as an OCI referrer. It returns the index digest.
func Push(ctx context.Context, idx v1.ImageIndex, sbom []byte, refs ...string) (v1.Hash, error) {
	if len(refs) == 0 {
		return v1.Hash{}, fmt.Errorf("imagebuild: push: no reference")
	}
	digest, err := idx.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	var repo name.Repository
	for i, r := range refs {
		tag, err := name.NewTag(r)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("imagebuild: push %s: %w", r, err)
		}
		if i > 0 && tag.Context() != repo {
			return v1.Hash{}, fmt.Errorf("imagebuild: push %s: not in repository %s", r, repo)
		}
		repo = tag.Context()
		if err := remote.WriteIndex(tag, idx, opts...); err != nil {
			return v1.Hash{}, fmt.Errorf("imagebuild: push %s: %w", r, err)
		}
	}
	if err := pushSBOM(repo, idx, sbom, opts); err != nil {
		return v1.Hash{}, err
	}
	return digest, nil
}

// pushSBOM writes an artifact manifest whose subject is the index and whose
// one layer is the SPDX document. Registries with the referrers API list it
// there; for the others go-containerregistry keeps the referrers tag
// (sha256-<digest>) up to date.
func pushSBOM(repo name.Repository, idx v1.ImageIndex, sbom []byte, opts []remote.Option) error {
	desc, err := indexDescriptor(idx)
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer(sbom, SBOMMediaType))
	if err != nil {
		return err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, SBOMMediaType)
	art := mutate.Subject(img, desc).(v1.Image)
	d, err := art.Digest()
	if err != nil {
		return err
	}
	ref := repo.Digest(d.String())
	if err := remote.Write(ref, art, opts...); err != nil {
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
