package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The local base holds what distroless/static gives a static Go binary:
// the user database naming 65532, a writable /tmp, the nonroot home and a
// CA bundle. No shell, no package manager.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
)

// baseImage returns the base for one platform: the local one, or the
// platform's manifest of a registry image.
func baseImage(ctx context.Context, cfg Config, p v1.Platform) (v1.Image, error) {
	if cfg.Base == LocalBase || cfg.Base == "" {
		return localBase(cfg)
	}
	ref, err := pinnedBase(cfg.Base)
	if err != nil {
		return nil, err
	}
	img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithPlatform(p),
		remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return nil, fmt.Errorf("imagebuild: pull base %s for %s/%s: %w", cfg.Base, p.OS, p.Architecture, err)
	}
	return img, nil
}

// pinnedBase parses a registry base, which must name its digest
// (repo:tag@sha256:...): a tag alone would let the base change under one
// commit, and with it the release's digests. `make bump-base` moves the pin.
func pinnedBase(base string) (name.Digest, error) {
	d, err := name.NewDigest(base)
	if err != nil {
		return name.Digest{}, fmt.Errorf("imagebuild: base %s: pin it by digest (repo:tag@sha256:..., see make bump-base): %w", base, err)
	}
	return d, nil
}

// ResolveBase returns ref pinned to the digest its tag names now (the
// index, so every platform): what `make bump-base` writes into the Makefile.
func ResolveBase(ctx context.Context, ref string) (string, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", fmt.Errorf("imagebuild: resolve %s: %w", ref, err)
	}
	desc, err := remote.Head(tag, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return "", fmt.Errorf("imagebuild: resolve %s: %w", ref, err)
	}
	return tag.String() + "@" + desc.Digest.String(), nil
}

// localBase builds the base from the CA bundle of the build machine's
// ca-certificates package (Debian's, on CI and in the tests), so the tests
// never pull an image from the internet.
func localBase(cfg Config) (v1.Image, error) {
	src := cfg.CABundleFile
	if src == "" {
		src = CABundle
	}
	certs, err := os.ReadFile(src)
	if err != nil {
		return nil, fmt.Errorf("imagebuild: CA bundle for the local base (install the ca-certificates package): %w", err)
	}
	if !bytes.Contains(certs, []byte("-----BEGIN CERTIFICATE-----")) {
		return nil, fmt.Errorf("imagebuild: %s holds no PEM certificate", src)
	}
	layer, err := tarLayer([]tarEntry{
		{path: "etc/", dir: true, mode: 0o755},
		{path: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "etc/group", mode: 0o644, data: []byte(group)},
		{path: "etc/ssl/", dir: true, mode: 0o755},
		{path: "etc/ssl/certs/", dir: true, mode: 0o755},
		{path: CABundle[1:], mode: 0o644, data: certs},
		{path: "home/", dir: true, mode: 0o755},
		{path: "home/nonroot/", dir: true, mode: 0o700, uid: 65532},
		{path: "tmp/", dir: true, mode: 0o1777},
	}, cfg.Created)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	return mutate.AppendLayers(img, layer)
}

type tarEntry struct {
	path string
	dir  bool
	mode int64
	uid  int
	data []byte
}

// tarLayer makes a gzip'd OCI layer of entries, every one stamped with
// mtime so the layer digest depends only on the content.
func tarLayer(entries []tarEntry, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.path, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: mtime, Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("imagebuild: tar %s: %w", e.path, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("imagebuild: tar %s: %w", e.path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
