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
	"debug/buildinfo"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/notices"

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
	// Notices is the THIRD_PARTY_NOTICES file laid into the image beside
	// the project's LICENSE (LicenseFile); both are required.
	Notices     string
	LicenseFile string
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
}

// Build compiles the binary for every platform and assembles the index.
func Build(ctx context.Context, log *slog.Logger, cfg Config) (*Result, error) {
	if cfg.Version == "" {
		return nil, fmt.Errorf("imagebuild: no version")
	}
	if len(cfg.Platforms) == 0 {
		cfg.Platforms = DefaultPlatforms
	}
	if cfg.Base != LocalBase && cfg.Base != "" {
		if _, err := pinnedBase(cfg.Base); err != nil {
			return nil, err // before minutes of compiling
		}
	}
	for _, f := range []string{cfg.Notices, cfg.LicenseFile} {
		if _, err := os.Stat(f); f == "" || err != nil {
			return nil, fmt.Errorf("imagebuild: the image carries LICENSE and %s: %q: %v", notices.FileName, f, err)
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
	licenses, err := notices.ReadFile(cfg.Notices)
	if err != nil {
		return nil, fmt.Errorf("imagebuild: %w", err)
	}
	sbom, err := SPDX(cfg, res.Binaries, licenses)
	if err != nil {
		return nil, err
	}
	res.SBOM = sbom
	return res, nil
}

// BuildFlags are the go build flags of every release binary besides
// -ldflags and -o. -buildvcs=false is explicit because the go command's
// default (auto) stamps vcs.revision, vcs.time and vcs.modified when it
// builds inside a git work tree: a clone would then embed whether it holds
// an untracked file, and a copy without .git would differ from a clone. The
// commit is in the image's revision label and the SBOM instead.
var BuildFlags = []string{"-trimpath", "-buildvcs=false"}

// buildEnv is the caller's environment (GOPROXY, GOTOOLCHAIN and the caches
// keep working) with everything that changes the compiled bytes fixed:
// GOFLAGS replaced (a -buildvcs=true, -tags or -gcflags there would
// otherwise reach the build; it is non-empty so the user's go env file,
// which an empty variable falls back to, cannot set it either), cgo off, the
// target, and the instruction-set levels at their defaults (GOAMD64=v3 in
// the environment would give other amd64 bytes).
func buildEnv(env []string, p v1.Platform) []string {
	for _, kv := range [][2]string{
		{"GOFLAGS", strings.Join(BuildFlags, " ")},
		{"CGO_ENABLED", "0"}, {"GOOS", p.OS}, {"GOARCH", p.Architecture},
		{"GOAMD64", "v1"}, {"GOARM64", "v8.0"},
	} {
		env = setEnv(env, kv[0], kv[1])
	}
	return env
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
	cmd := exec.CommandContext(ctx, goCmd, append(append([]string{"build"}, BuildFlags...),
		"-ldflags", "-s -w -X "+VersionVar+"="+cfg.Version,
		"-o", out, Package)...)
	cmd.Dir = cfg.ModuleDir
	cmd.Env = buildEnv(os.Environ(), p)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("imagebuild: go build %s/%s: %w\n%s", p.OS, p.Architecture, err, strings.TrimSpace(stderr.String()))
	}
	if err := checkStamp(out); err != nil {
		return "", err
	}
	fi, err := os.Stat(out)
	if err != nil {
		return "", err
	}
	log.Info("built binary", "platform", p.OS+"/"+p.Architecture, "path", out, "bytes", fi.Size(), "duration", time.Since(start).Round(time.Millisecond))
	return out, nil
}

// checkStamp reads back what the go command recorded: no VCS stamp, and
// nothing from the environment that buildEnv did not fix (an experiment
// from a go env file), so a binary that would differ from another
// machine's build stops the release here rather than at the comparison.
func checkStamp(bin string) error {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("imagebuild: build info of %s: %w", bin, err)
	}
	for _, s := range bi.Settings {
		switch {
		case strings.HasPrefix(s.Key, "vcs."), s.Key == "-buildvcs" && s.Value != "false":
			return fmt.Errorf("imagebuild: %s carries %s=%s: the build must not stamp VCS data", bin, s.Key, s.Value)
		case s.Key == "GOEXPERIMENT" && s.Value != "":
			return fmt.Errorf("imagebuild: %s was built with GOEXPERIMENT=%s: unset it (go env -u GOEXPERIMENT)", bin, s.Value)
		}
	}
	return nil
}

// assemble puts the binary on the base and sets the runtime config: the
// entrypoint and default command of every earlier release, the user, the
// CA bundle for the AWS SDK, and the OCI labels.
func assemble(base v1.Image, cfg Config, p v1.Platform, bin string) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	entries := []tarEntry{
		{path: "usr/", dir: true, mode: 0o755},
		{path: "usr/local/", dir: true, mode: 0o755},
		{path: "usr/local/bin/", dir: true, mode: 0o755},
		{path: strings.TrimPrefix(BinaryPath, "/"), mode: 0o755, data: data},
	}
	docs, err := docEntries(cfg)
	if err != nil {
		return nil, err
	}
	layer, err := tarLayer(append(entries, docs...), cfg.Created)
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

// DocDir holds the project's LICENSE and THIRD_PARTY_NOTICES in the image,
// where distroless keeps its packages' licences (/usr/share/doc/<package>):
// whoever copies the image copies the notices Apache-2.0 §4 asks for.
const DocDir = "/usr/share/doc/kubecost-s3-exporter"

// docEntries are the licence files under DocDir, when the build was given
// them (the unit tests assemble without).
func docEntries(cfg Config) ([]tarEntry, error) {
	if cfg.Notices == "" && cfg.LicenseFile == "" {
		return nil, nil
	}
	dir := strings.TrimPrefix(DocDir, "/") + "/"
	out := []tarEntry{{path: "usr/share/", dir: true, mode: 0o755}, {path: "usr/share/doc/", dir: true, mode: 0o755}, {path: dir, dir: true, mode: 0o755}}
	for _, f := range []struct{ src, name string }{{cfg.LicenseFile, "LICENSE"}, {cfg.Notices, notices.FileName}} {
		data, err := os.ReadFile(f.src)
		if err != nil {
			return nil, fmt.Errorf("imagebuild: %w", err)
		}
		out = append(out, tarEntry{path: dir + f.name, mode: 0o644, data: data})
	}
	return out, nil
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
