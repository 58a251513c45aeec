// Command kse-notices writes THIRD_PARTY_NOTICES (see internal/notices)
// from the module graph of the exporter's main package, or with -check
// fails when the file on disk is not what it would write.
//
//	kse-notices -o THIRD_PARTY_NOTICES         (make notices)
//	kse-notices -check THIRD_PARTY_NOTICES
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/imagebuild"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/notices"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kse-notices:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kse-notices", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("C", ".", "repository root")
	out := fs.String("o", "", "write the notices to this file")
	check := fs.String("check", "", "fail unless this file is what -o would write")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*out == "") == (*check == "") || fs.NArg() > 0 {
		return errors.New("give exactly one of -o FILE or -check FILE")
	}
	stdlib, mods, err := notices.Collect(ctx, notices.Source{
		ModuleDir: *dir, Package: imagebuild.Package, Platforms: strings.Split(*platforms, ","),
	})
	if err != nil {
		return err
	}
	data := notices.Render(stdlib, mods)
	if *check != "" {
		have, err := os.ReadFile(*check)
		if err != nil {
			return err
		}
		if !bytes.Equal(have, data) {
			return fmt.Errorf("%s is not current: run make notices and commit it", *check)
		}
		_, err = fmt.Fprintf(stdout, "%s: current (%d modules)\n", *check, len(mods))
		return err
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s: %d modules\n", *out, len(mods))
	return err
}
