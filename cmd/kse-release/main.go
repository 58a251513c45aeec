// Command kse-release prints what a run of the release workflow must
// publish (see internal/releaseplan), as step outputs:
//
//	kse-release -dir bin/release -state bin/release/state -scope publish >>"$GITHUB_OUTPUT"
//	kse-release -dir bin/release -state bin/release/provenance.state -scope provenance >>"$GITHUB_OUTPUT"
//
// The state file holds the facts the workflow gathered (kse-image -check,
// kse-chart -check, the GitHub release's assets, the attestations); the
// decision needs no network. With -scope provenance it also writes
// provenance.sha256 in -dir: the release files still without provenance.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/releaseplan"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kse-release:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kse-release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "bin/release", "what make release-build wrote: SHA256SUMS, its files, image.digest, chart.digest")
	statePath := fs.String("state", "", "the gathered facts (required)")
	scope := fs.String("scope", "publish", "provenance (the builder job) or publish")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *statePath == "" || fs.NArg() > 0 {
		return errors.New("give -state FILE and no arguments")
	}
	data, err := os.ReadFile(*statePath)
	if err != nil {
		return err
	}
	st, err := releaseplan.ParseState(data, *scope == "publish")
	if err != nil {
		return err
	}
	want, err := releaseplan.LoadWant(*dir)
	if err != nil {
		return err
	}
	plan, err := releaseplan.Decide(want, st)
	if err != nil {
		return err
	}
	if plan, err = plan.Scope(*scope); err != nil {
		return err
	}
	out, err := plan.Outputs(*scope, *dir, want)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "kse-release: %s plan:\n%s", *scope, out)
	_, err = io.WriteString(stdout, out)
	return err
}
