// Command kse-release decides and carries out what a run of the release
// workflow publishes (see internal/releaseplan), by content:
//
//	kse-release plan -dir bin/release -state bin/release/state -scope publish >>"$GITHUB_OUTPUT"
//	kse-release plan -dir bin/release -state bin/release/provenance.state -scope provenance >>"$GITHUB_OUTPUT"
//	kse-release registry-state -dir bin/release -image REPO -chart REPO/NAME
//	kse-release github-state -dir bin/release -tag vX.Y.Z -attach NAME.intoto.jsonl
//	kse-release publish -dir bin/release -tag vX.Y.Z -attach NAME.intoto.jsonl
//
// plan reads the facts the workflow gathered and needs no network.
// registry-state prints whether the image's and the chart's cosign
// signatures and the SBOM attestation verify under the release workflow's
// identity (cosign verify); github-state whether the tag's GitHub release
// (a draft too) holds a signature bundle that verifies against this
// build's SHA256SUMS, and stops when the release holds what a re-run must
// not replace. publish creates the draft, uploads and checks every asset,
// then publishes it.
//
// The identity is release.yml of -repo at -tag; cosign's trust flags
// (COSIGN_TRUST_FLAGS, COSIGN_BLOB_TRUST_FLAGS, COSIGN_REGISTRY_FLAGS,
// space-separated) are empty in the release and name a local CA in the
// tests. The GitHub API is $GITHUB_API_URL with $GH_TOKEN or $GITHUB_TOKEN.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/ghrelease"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/releaseplan"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kse-release:", err)
		os.Exit(1)
	}
}

// common are the flags every subcommand shares.
type common struct {
	dir, tag, repo, server, cosign string
}

func flags(name string, getenv func(string) string, stderr io.Writer) (*flag.FlagSet, *common) {
	fs := flag.NewFlagSet("kse-release "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &common{}
	fs.StringVar(&c.dir, "dir", "bin/release", "what make release-build wrote: SHA256SUMS, its files, image.digest, chart.digest")
	fs.StringVar(&c.tag, "tag", getenv("VERSION"), "the release's tag (vX.Y.Z)")
	fs.StringVar(&c.repo, "repo", or(getenv("GITHUB_REPOSITORY"), "kubecost-s3-exporter/kubecost-s3-exporter"), "owner/name: the release identity's repository and the GitHub release's")
	fs.StringVar(&c.server, "server", or(getenv("GITHUB_SERVER_URL"), "https://github.com"), "the identity's server")
	fs.StringVar(&c.cosign, "cosign", getenv("COSIGN_BIN"), "the cosign binary")
	return fs, c
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("give a subcommand: plan, registry-state, github-state or publish")
	}
	switch args[0] {
	case "plan":
		return plan(args[1:], getenv, stdout, stderr)
	case "registry-state":
		return registryState(ctx, args[1:], getenv, stdout, stderr)
	case "github-state":
		return githubState(ctx, args[1:], getenv, stdout, stderr)
	case "publish":
		return publish(ctx, args[1:], getenv, stderr)
	}
	return fmt.Errorf("unknown subcommand %q: plan, registry-state, github-state or publish", args[0])
}

func plan(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := flags("plan", getenv, stderr)
	statePath := fs.String("state", "", "the gathered facts (required)")
	scope := fs.String("scope", "publish", "provenance (the builder job) or publish")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *statePath == "" || fs.NArg() > 0 {
		return errors.New("plan: give -state FILE and no arguments")
	}
	data, err := os.ReadFile(*statePath)
	if err != nil {
		return err
	}
	st, err := releaseplan.ParseState(data, *scope == "publish")
	if err != nil {
		return err
	}
	want, err := releaseplan.LoadWant(c.dir)
	if err != nil {
		return err
	}
	p, err := releaseplan.Decide(want, st)
	if err != nil {
		return err
	}
	if p, err = p.Scope(*scope); err != nil {
		return err
	}
	out, err := p.Outputs(*scope, c.dir, want)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "kse-release: %s plan:\n%s", *scope, out)
	_, err = io.WriteString(stdout, out)
	return err
}

func (c *common) verifier(getenv func(string) string, stderr io.Writer) releaseplan.Cosign {
	return releaseplan.Cosign{
		Bin: c.cosign, ID: releaseplan.ReleaseIdentity(c.server, c.repo, c.tag),
		Flags:          strings.Fields(getenv("COSIGN_REGISTRY_FLAGS")),
		TrustFlags:     strings.Fields(getenv("COSIGN_TRUST_FLAGS")),
		BlobTrustFlags: strings.Fields(getenv("COSIGN_BLOB_TRUST_FLAGS")),
		Log:            stderr,
	}
}

// registryState prints image-signature, sbom-attestation and
// chart-signature: present when cosign verifies them under the identity.
func registryState(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := flags("registry-state", getenv, stderr)
	image := fs.String("image", "", "the image repository (IMAGE_REPO)")
	chart := fs.String("chart", "", "the chart's repository (CHART_REPO without oci://, and the chart's name)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *image == "" || *chart == "" || c.tag == "" {
		return errors.New("registry-state: give -image, -chart and -tag")
	}
	imageDigest, chartDigest, err := releaseplan.LoadDigests(c.dir)
	if err != nil {
		return err
	}
	v := c.verifier(getenv, stderr)
	img, ch := *image+"@"+imageDigest, *chart+"@"+chartDigest
	for _, check := range []struct {
		key string
		err error
	}{
		{"image-signature", v.VerifyImage(ctx, img)},
		{"sbom-attestation", v.VerifyAttestation(ctx, img, "spdxjson")},
		{"chart-signature", v.VerifyImage(ctx, ch)},
	} {
		if _, err := fmt.Fprintf(stdout, "%s=%s\n", check.key, presence(check.err == nil)); err != nil {
			return err
		}
	}
	return nil
}

func presence(ok bool) string {
	if ok {
		return "present"
	}
	return "absent"
}

func (c *common) github(getenv func(string) string) *ghrelease.Client {
	return &ghrelease.Client{API: strings.TrimSuffix(or(getenv("GITHUB_API_URL"), "https://api.github.com"), "/"),
		Repo: c.repo, Token: or(getenv("GH_TOKEN"), getenv("GITHUB_TOKEN"))}
}

// githubState prints release= (absent, draft, published), release-immutable=
// and sums-signature=; it fails, before anything is pushed, when the
// release holds what the publish step must not replace.
func githubState(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := flags("github-state", getenv, stderr)
	attach := fs.String("attach", "", "space-separated files of -dir the release holds besides SHA256SUMS and what it lists (the provenance bundles): any other asset is no file of this build")
	pending := fs.String("pending", "", "space-separated assets the release holds that this run makes later (the provenance bundles, before they are attested): known, absent from -dir, their bytes checked by a later github-state with -attach")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := releaseplan.CheckTag(c.tag); err != nil {
		return err
	}
	want, err := releaseplan.LoadWant(c.dir)
	if err != nil {
		return err
	}
	if err := releaseplan.LoadFiles(c.dir, strings.Fields(*attach), want.Files); err != nil {
		return err
	}
	for _, n := range strings.Fields(*pending) {
		if _, ok := want.Files[n]; ok {
			return fmt.Errorf("kse-release: github-state: %s is -pending and a file of the build", n)
		}
		want.Files[n] = releaseplan.File{}
	}
	facts, _, err := releaseplan.GatherRelease(ctx, c.github(getenv), c.verifier(getenv, stderr), c.tag, c.dir, want.Files)
	if err != nil {
		return err
	}
	// A pending asset the release holds counts as this build's here: its
	// bytes do not exist yet. Absent, or half-uploaded, it is decided as
	// any file (a published immutable release that lacks it stops now).
	for _, n := range strings.Fields(*pending) {
		if have, ok := facts.Assets[n]; ok {
			want.Files[n] = releaseplan.File{SHA256: have}
		}
	}
	if _, err := releaseplan.DecideRelease(want.Files, facts, releaseplan.Prerelease(c.tag)); err != nil {
		return err
	}
	state := "absent"
	if facts.Exists {
		state = map[bool]string{true: "draft", false: "published"}[facts.Draft]
	}
	_, err = fmt.Fprintf(stdout, "release=%s\nrelease-immutable=%t\nsums-signature=%s\n", state, facts.Immutable, presence(facts.SumsSigned))
	return err
}

func publish(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs, c := flags("publish", getenv, stderr)
	attach := fs.String("attach", "", "space-separated files of -dir to attach besides SHA256SUMS and what it lists (the provenance bundles)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := releaseplan.CheckTag(c.tag); err != nil {
		return err
	}
	want, err := releaseplan.LoadWant(c.dir)
	if err != nil {
		return err
	}
	if err := releaseplan.LoadFiles(c.dir, strings.Fields(*attach), want.Files); err != nil {
		return err
	}
	return releaseplan.PublishRelease(ctx, c.github(getenv), c.verifier(getenv, stderr), stderr, c.tag, c.dir, want.Files)
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
