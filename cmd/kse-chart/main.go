// Command kse-chart packages the Helm chart reproducibly and pushes it to an
// OCI registry (see internal/chartpack), in place of `helm package` and
// `helm push`, whose archives and manifests carry the time they ran.
//
//	kse-chart -version 1.2.3 -app-version v1.2.3 -image-repo ghcr.io/org/kse -created 1700000000 -out-dir bin/release
//	kse-chart ... -push oci://ghcr.io/org/charts -digest-file bin/release/chart.digest
//	kse-chart ... -check oci://ghcr.io/org/charts
//
// It prints the archive's path (with -push, the chart's digest; with
// -check, whether the chart is published, as a chart=present|absent line;
// its signature is kse-release registry-state's, by cosign verify); it
// never overwrites a tag that names other bytes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/chartpack"
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
		fmt.Fprintln(os.Stderr, "kse-chart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kse-chart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o chartpack.Options
	dir := fs.String("chart", "chart", "chart directory")
	fs.StringVar(&o.Version, "version", "", "chart version, SemVer (required)")
	fs.StringVar(&o.AppVersion, "app-version", "", "appVersion: the image tag the chart runs by default (required)")
	fs.StringVar(&o.ImageRepository, "image-repo", "", "the chart's default image.repository (empty keeps values.yaml's)")
	created := fs.String("created", "0", "Unix seconds: the entries' mtime and the manifest's creation time (the commit's time)")
	outDir := fs.String("out-dir", "bin/release", "where the .tgz is written")
	push := fs.String("push", "", "OCI repository to push to, oci://host/path")
	check := fs.String("check", "", "OCI repository: print whether the version's tag names this package (chart=present or absent); fail when the tag names other bytes")
	digestFile := fs.String("digest-file", "", "write the chart's manifest digest (the one it has in any registry) here")
	manifestFile := fs.String("manifest-file", "", "write the chart's manifest here: a file whose SHA-256 is the chart's digest, the subject gh attestation verify checks")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	secs, err := strconv.ParseInt(*created, 10, 64)
	if err != nil {
		return fmt.Errorf("-created %q: want Unix seconds", *created)
	}
	o.Created = time.Unix(secs, 0).UTC()
	c, err := chartpack.Package(*dir, o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(*outDir, c.FileName())
	if err := os.WriteFile(path, c.Archive, 0o644); err != nil {
		return err
	}
	d, err := c.Digest(o.Created)
	if err != nil {
		return err
	}
	// The digest the chart has in any registry, known before a push: the
	// release's builder attests it (docs/release.md).
	if *digestFile != "" {
		if err := os.WriteFile(*digestFile, []byte(d.String()+"\n"), 0o644); err != nil {
			return err
		}
	}
	if *manifestFile != "" {
		raw, _, _, err := c.Manifest(o.Created)
		if err != nil {
			return err
		}
		if err := os.WriteFile(*manifestFile, raw, 0o644); err != nil {
			return err
		}
	}
	switch {
	case *check != "":
		return checkChart(ctx, c, *check, d, stdout, stderr)
	case *push != "":
		pushed, was, err := c.Push(*push, o.Created, imagebuild.RemoteOptions(ctx)...)
		if err != nil {
			return err
		}
		tag, _ := c.Tag(*push)
		fmt.Fprintf(stderr, "kse-chart: %s@%s (already there: %v)\n", tag, pushed, was)
		_, err = fmt.Fprintln(stdout, pushed)
		return err
	}
	_, err = fmt.Fprintln(stdout, path)
	return err
}

// checkChart prints whether the version's tag names this package, as a
// key=present|absent line for the release plan; a tag naming other bytes
// is an error.
func checkChart(ctx context.Context, c *chartpack.Chart, repo string, d v1.Hash, stdout, stderr io.Writer) error {
	tag, err := c.Tag(repo)
	if err != nil {
		return err
	}
	same, err := imagebuild.CheckTag(tag, d, imagebuild.RemoteOptions(ctx)...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "kse-chart: %s (%s): chart %s\n", tag, d, imagebuild.Presence(same))
	_, err = fmt.Fprintf(stdout, "chart=%s\n", imagebuild.Presence(same))
	return err
}
