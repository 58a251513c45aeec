// Package imagebuild builds the exporter's container image without a
// container engine: it cross-compiles the static binary for each platform
// with the go command, lays it on a base image with go-containerregistry,
// and returns one OCI image index with an SPDX SBOM of the binary.
//
// It is release tooling, used by cmd/kse-image (make image, make
// image-push); the exporter itself never links it.
package imagebuild

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths and identity inside the image. They are the distroless "nonroot"
// conventions, so the image is the same whichever base it is built on.
const (
	BinaryPath = "/usr/local/bin/kubecost-s3-exporter"
	CABundle   = "/etc/ssl/certs/ca-certificates.crt"
	// UID and GID 65532: numeric, so Kubernetes can check runAsNonRoot
	// without resolving a name.
	User = "65532:65532"
	// VersionVar is the linker symbol the version is stamped into.
	VersionVar = "github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter.Version"
	// Package is the only package built: the image build never compiles
	// (or downloads) what only the tests use.
	Package = "./cmd/kubecost-s3-exporter"
)

// Config is one build.
type Config struct {
	Version  string // stamped into the binary and the version label
	Revision string // git commit, the revision label
	Source   string // repository URL, the source label
	Licenses string // SPDX expression, the licenses label
	// Created is the image's creation time. A fixed value (the commit's
	// time) makes two builds of one commit byte-identical.
	Created   time.Time
	Platforms []v1.Platform
	// Base is the base image: LocalBase builds one from CABundleFile;
	// anything else is a registry reference (the release uses distroless).
	Base         string
	CABundleFile string
	ModuleDir    string // the repository root, where go build runs
	BinDir       string // where the per-platform binaries are written
	GoCommand    string // "go" unless set
	// Run names the workflow run (or machine) for the provenance.
	Run BuildRun
}

// LocalBase names the base image the build makes itself.
const LocalBase = "local"

// DefaultPlatforms are linux/amd64 and linux/arm64 (Graviton).
var DefaultPlatforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// Result is a built image index and what was made on the way.
type Result struct {
	Index    v1.ImageIndex
	Binaries map[string]string // "linux/amd64" -> path of the binary
	SBOM     []byte            // SPDX 2.3 JSON
	// Provenance is the SLSA v1 predicate of the build (see Provenance).
	Provenance []byte
}

// Build compiles the binary for every platform and assembles the index.
func Build(ctx context.Context, log *slog.Logger, cfg Config) (*Result, error) {
	if cfg.Version == "" {
		return nil, fmt.Errorf("imagebuild: no version")
	}
	if len(cfg.Platforms) == 0 {
		cfg.Platforms = DefaultPlatforms
	}
	if cfg.Run.BuilderID == "" {
		return nil, fmt.Errorf("imagebuild: no builder id for the provenance")
	}
	if cfg.Base != LocalBase && cfg.Base != "" {
		if _, err := pinnedBase(cfg.Base); err != nil {
			return nil, err // before minutes of compiling
		}
	}
	res := &Result{Binaries: map[string]string{}}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range cfg.Platforms {
		bin, err := compile(ctx, log, cfg, p)
		if err != nil {
			return nil, err
		}
		res.Binaries[p.OS+"/"+p.Architecture] = bin
		base, err := baseImage(ctx, cfg, p)
		if err != nil {
			return nil, err
		}
		img, err := assemble(base, cfg, p, bin)
		if err != nil {
			return nil, err
		}
		pp := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &pp},
		})
	}
	res.Index = idx
	sbom, err := SPDX(cfg, res.Binaries)
	if err != nil {
		return nil, err
	}
	res.SBOM = sbom
	if res.Provenance, err = Provenance(cfg, cfg.Run, res.Binaries); err != nil {
		return nil, err
	}
	return res, nil
}

// compile builds the static binary for one platform into BinDir.
func compile(ctx context.Context, log *slog.Logger, cfg Config, p v1.Platform) (string, error) {
	goCmd := cfg.GoCommand
	if goCmd == "" {
		goCmd = "go"
	}
	out, err := filepath.Abs(filepath.Join(cfg.BinDir, fmt.Sprintf("kubecost-s3-exporter_%s_%s", p.OS, p.Architecture)))
	if err != nil {
		return "", err
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath",
		"-ldflags", "-s -w -X "+VersionVar+"="+cfg.Version,
		"-o", out, Package)
	cmd.Dir = cfg.ModuleDir
	// The environment is the caller's with the target set: GOFLAGS,
	// GOPROXY and the caches keep working.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("imagebuild: go build %s/%s: %w\n%s", p.OS, p.Architecture, err, strings.TrimSpace(stderr.String()))
	}
	fi, err := os.Stat(out)
	if err != nil {
		return "", err
	}
	log.Info("built binary", "platform", p.OS+"/"+p.Architecture, "path", out, "bytes", fi.Size(), "duration", time.Since(start).Round(time.Millisecond))
	return out, nil
}

// assemble puts the binary on the base and sets the runtime config: the
// entrypoint and default command of every earlier release, the user, the
// CA bundle for the AWS SDK, and the OCI labels.
func assemble(base v1.Image, cfg Config, p v1.Platform, bin string) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	layer, err := tarLayer([]tarEntry{
		{path: "usr/", dir: true, mode: 0o755},
		{path: "usr/local/", dir: true, mode: 0o755},
		{path: "usr/local/bin/", dir: true, mode: 0o755},
		{path: strings.TrimPrefix(BinaryPath, "/"), mode: 0o755, data: data},
	}, cfg.Created)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, fmt.Errorf("imagebuild: append layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("imagebuild: base config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: cfg.Created}
	cf.Author = ""
	cf.History = nil // the base's history names its build, not ours
	c := &cf.Config
	c.User = User
	c.Entrypoint = []string{BinaryPath}
	c.Cmd = []string{"run"}
	c.WorkingDir = "/"
	c.Env = setEnv(c.Env, "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	c.Env = setEnv(c.Env, "SSL_CERT_FILE", CABundle)
	c.Labels = Labels(cfg)
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("imagebuild: config: %w", err)
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
}

// Labels are the image's OCI annotations-as-labels.
func Labels(cfg Config) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "kubecost-s3-exporter",
		"org.opencontainers.image.description": "Exports Kubecost allocation data to Parquet in S3",
		"org.opencontainers.image.source":      cfg.Source,
		"org.opencontainers.image.version":     cfg.Version,
		"org.opencontainers.image.revision":    cfg.Revision,
		"org.opencontainers.image.licenses":    cfg.Licenses,
		"org.opencontainers.image.created":     cfg.Created.UTC().Format(time.RFC3339),
	}
}

func setEnv(env []string, key, value string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, key+"=") {
			out = append(out, e)
		}
	}
	return append(out, key+"="+value)
}
