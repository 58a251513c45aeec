// Command kse-image builds the exporter's multi-platform container image
// without a container engine (see internal/imagebuild) and writes it to an
// OCI layout directory, pushes it to a registry, or both.
//
//	kse-image -version v1.2.3 -oci-layout .cache/image
//	kse-image -version v1.2.3 -base gcr.io/distroless/static-debian12:nonroot \
//	    -push ghcr.io/org/kubecost-s3-exporter:v1.2.3 -digest-file bin/image.digest
//
// It prints the index digest on stdout; logs go to stderr.
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

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kse-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := imagebuild.Config{}
	fs.StringVar(&cfg.Version, "version", "", "version stamped into the binary and the labels (required)")
	fs.StringVar(&cfg.Revision, "revision", "", "git commit, the revision label")
	fs.StringVar(&cfg.Source, "source", "https://github.com/kubecost-s3-exporter/kubecost-s3-exporter", "repository URL, the source label")
	fs.StringVar(&cfg.Licenses, "licenses", "NOASSERTION", "SPDX license expression, the licenses label")
	created := fs.String("created", "0", "image creation time: Unix seconds (the commit time makes builds reproducible) or RFC 3339")
	fs.StringVar(&cfg.Base, "base", imagebuild.LocalBase, `base image: "local" (built from -ca-bundle) or a registry reference`)
	fs.StringVar(&cfg.CABundleFile, "ca-bundle", imagebuild.CABundle, "PEM CA bundle for the local base (Debian's ca-certificates)")
	fs.StringVar(&cfg.ModuleDir, "C", ".", "repository root")
	fs.StringVar(&cfg.BinDir, "bin-dir", "bin/release", "where the per-platform binaries and the SBOM are written")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list")
	ociLayout := fs.String("oci-layout", "", "write the index into this OCI layout directory")
	push := fs.String("push", "", "comma-separated tags (one repository) to push the index and its SBOM to")
	digestFile := fs.String("digest-file", "", "write the index digest (sha256:...) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *ociLayout == "" && *push == "" {
		return errors.New("nothing to do: give -oci-layout and/or -push")
	}
	var err error
	if cfg.Created, err = parseTime(*created); err != nil {
		return err
	}
	if cfg.Platforms, err = parsePlatforms(*platforms); err != nil {
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
	if *ociLayout != "" {
		if err := imagebuild.WriteLayout(*ociLayout, res.Index); err != nil {
			return err
		}
		log.Info("wrote OCI layout", "dir", *ociLayout)
	}
	if *push != "" {
		if _, err := imagebuild.Push(ctx, res.Index, res.SBOM, strings.Split(*push, ",")...); err != nil {
			return err
		}
		log.Info("pushed", "tags", *push, "digest", digest)
	}
	if *digestFile != "" {
		if err := os.WriteFile(*digestFile, []byte(digest.String()+"\n"), 0o644); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintln(stdout, digest)
	return err
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
