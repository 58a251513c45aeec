// Command kse-image builds the exporter's multi-platform container image
// without a container engine (see internal/imagebuild) and writes it to an
// OCI layout directory, pushes it to a registry, or both.
//
//	kse-image -version v1.2.3 -oci-layout .cache/image
//	kse-image -version v1.2.3 -base gcr.io/distroless/static-debian12:nonroot@sha256:... \
//	    -push ghcr.io/org/kubecost-s3-exporter:v1.2.3 -digest-file bin/image.digest
//	kse-image -version v1.2.3 -check ghcr.io/org/kubecost-s3-exporter:v1.2.3
//	kse-image -resolve-base gcr.io/distroless/static-debian12:nonroot
//
// It prints the index digest on stdout (with -check, whether the registry
// holds this build and its SBOM, as key=present|absent lines for the
// release plan;
// with -resolve-base, the pinned reference); logs go to stderr.
// It never overwrites a tag that names other bytes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/imagebuild"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kse-image:", err)
		os.Exit(1)
	}
}

// options are the command line beyond the build's Config.
type options struct {
	created, platforms, ociLayout, push, check, digestFile, manifestFile, resolve string
}

func parseFlags(args []string, stderr io.Writer) (imagebuild.Config, options, error) {
	fs := flag.NewFlagSet("kse-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg imagebuild.Config
	var o options
	fs.StringVar(&cfg.Version, "version", "", "version stamped into the binary and the labels (required)")
	fs.StringVar(&cfg.Revision, "revision", "", "git commit, the revision label")
	fs.StringVar(&cfg.Source, "source", "https://github.com/kubecost-s3-exporter/kubecost-s3-exporter", "repository URL, the source label")
	fs.StringVar(&cfg.Licenses, "licenses", imagebuild.License, "SPDX license expression, the licenses label")
	fs.StringVar(&o.created, "created", "0", "image creation time: Unix seconds (the commit time makes builds reproducible) or RFC 3339")
	fs.StringVar(&cfg.Base, "base", imagebuild.LocalBase, `base image: "local" (built from -ca-bundle) or a registry reference pinned by digest`)
	fs.StringVar(&cfg.CABundleFile, "ca-bundle", imagebuild.CABundle, "PEM CA bundle for the local base (Debian's ca-certificates)")
	fs.StringVar(&cfg.ModuleDir, "C", ".", "repository root")
	fs.StringVar(&cfg.BinDir, "bin-dir", "bin/release", "where the per-platform binaries and the SBOM are written")
	fs.StringVar(&o.platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list")
	fs.StringVar(&o.ociLayout, "oci-layout", "", "write the index into this OCI layout directory")
	fs.StringVar(&o.push, "push", "", "comma-separated tags (one repository) to push the index and its SBOM to")
	fs.StringVar(&o.check, "check", "", "comma-separated tags: print whether they name this build and its SBOM is there; fail when a tag names other bytes")
	fs.StringVar(&o.digestFile, "digest-file", "", "write the index digest (sha256:...) to this file")
	fs.StringVar(&o.manifestFile, "manifest-file", "", "write the index manifest to this file: its SHA-256 is the index digest, the subject gh attestation verify checks")
	fs.StringVar(&o.resolve, "resolve-base", "", "print this base tag pinned to the digest it names now, and exit (make bump-base)")
	fs.StringVar(&cfg.Notices, "notices", "THIRD_PARTY_NOTICES", "the notices file laid into the image; its licences are the SBOM's")
	fs.StringVar(&cfg.LicenseFile, "license-file", "LICENSE", "the project's licence text laid into the image")
	if err := fs.Parse(args); err != nil {
		return cfg, o, err
	}
	if fs.NArg() > 0 {
		return cfg, o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	// The licence files are the repository's: relative to -C, like the build.
	for _, f := range []*string{&cfg.Notices, &cfg.LicenseFile} {
		if !filepath.IsAbs(*f) {
			*f = filepath.Join(cfg.ModuleDir, *f)
		}
	}
	return cfg, o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.resolve != "" {
		pinned, err := imagebuild.ResolveBase(ctx, o.resolve)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, pinned)
		return err
	}
	if o.ociLayout == "" && o.push == "" && o.check == "" {
		return errors.New("nothing to do: give -oci-layout, -push or -check")
	}
	if cfg.Created, err = parseTime(o.created); err != nil {
		return err
	}
	if cfg.Platforms, err = parsePlatforms(o.platforms); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.BinDir, 0o755); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	res, err := imagebuild.Build(ctx, log, cfg)
	if err != nil {
		return err
	}
	sbomPath, err := imagebuild.WriteFiles(cfg.BinDir, cfg.Version, res.SBOM)
	if err != nil {
		return err
	}
	digest, err := res.Index.Digest()
	if err != nil {
		return err
	}
	log.Info("image index", "digest", digest, "sbom", sbomPath)
	return deliver(ctx, log, o, res, digest, stdout)
}

// deliver hands the built index on as the flags ask: the manifest file and
// OCI layout first, then either a registry check (which prints what the
// registry holds, for the release plan) or a push, and the digest last, so
// a digest file exists only after everything asked for succeeded.
func deliver(ctx context.Context, log *slog.Logger, o options, res *imagebuild.Result, digest v1.Hash, stdout io.Writer) error {
	if o.manifestFile != "" {
		raw, err := res.Index.RawManifest()
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.manifestFile, raw, 0o644); err != nil {
			return err
		}
	}
	if o.ociLayout != "" {
		if err := imagebuild.WriteLayout(o.ociLayout, res.Index, res.SBOM); err != nil {
			return err
		}
		log.Info("wrote OCI layout", "dir", o.ociLayout)
	}
	if o.check != "" {
		tags, err := imagebuild.ParseTags(o.check)
		if err != nil {
			return err
		}
		st, err := imagebuild.Inspect(res.Index, res.SBOM, tags, imagebuild.RemoteOptions(ctx)...)
		if err != nil {
			return err
		}
		log.Info("checked", "tags", o.check, "digest", digest, "state", st)
		if err := writeDigest(o.digestFile, digest); err != nil {
			return err
		}
		_, err = fmt.Fprint(stdout, st.Lines())
		return err
	}
	if o.push != "" {
		pr, err := imagebuild.Push(ctx, res.Index, res.SBOM, strings.Split(o.push, ",")...)
		if err != nil {
			return err
		}
		log.Info("pushed", "tags", o.push, "digest", digest, "already there", pr.Skipped)
	}
	if err := writeDigest(o.digestFile, digest); err != nil {
		return err
	}
	_, err := fmt.Fprintln(stdout, digest)
	return err
}

func writeDigest(path string, d v1.Hash) error {
	if path == "" {
		return nil
	}
	return os.WriteFile(path, []byte(d.String()+"\n"), 0o644)
}

func parseTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("-created %q: want Unix seconds or RFC 3339", s)
	}
	return t.UTC(), nil
}

func parsePlatforms(s string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, p := range strings.Split(s, ",") {
		osName, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || osName == "" || arch == "" || strings.Contains(arch, "/") {
			return nil, fmt.Errorf("-platforms: %q is not os/arch", p)
		}
		out = append(out, v1.Platform{OS: osName, Architecture: arch})
	}
	return out, nil
}
