package notices

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Source says which build to describe.
type Source struct {
	ModuleDir string   // the repository root, where go list runs
	Package   string   // the main package, ./cmd/kubecost-s3-exporter
	Platforms []string // "linux/amd64", ...: the union of their modules
	GoCommand string   // "go" unless set
}

// listed is the part of `go list -json` read here.
type listed struct {
	Standard bool
	Module   *listedModule
}

type listedModule struct {
	Path, Version, Dir string
	Main               bool
	Replace            *listedModule
}

// Collect lists the modules linked into Package on every platform (cgo off,
// as the release builds) and reads their licence files from the module
// cache, and Go's licence from GOROOT. go list may download modules that
// are not in the cache yet, through GOPROXY.
func Collect(ctx context.Context, src Source) (stdlib Module, mods []Module, err error) {
	goCmd := src.GoCommand
	if goCmd == "" {
		goCmd = "go"
	}
	found := map[string]listedModule{}
	for _, p := range src.Platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok {
			return stdlib, nil, fmt.Errorf("notices: platform %q is not os/arch", p)
		}
		if err := listModules(ctx, goCmd, src, goos, goarch, found); err != nil {
			return stdlib, nil, err
		}
	}
	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		m := found[k]
		mod, err := readModule(m.Path, m.Version, m.Dir)
		if err != nil {
			return stdlib, nil, err
		}
		mods = append(mods, mod)
	}
	stdlib, err = goModule(ctx, goCmd, src.ModuleDir)
	return stdlib, mods, err
}

// listModules adds the modules of one platform's package graph to found,
// keyed "path version"; a replaced module is listed as its replacement,
// which is what the binary's build information names.
func listModules(ctx context.Context, goCmd string, src Source, goos, goarch string, found map[string]listedModule) error {
	cmd := exec.CommandContext(ctx, goCmd, "list", "-deps", "-json=Standard,Module", src.Package)
	cmd.Dir = src.ModuleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=-mod=readonly")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("notices: go list %s/%s: %w\n%s", goos, goarch, err, strings.TrimSpace(stderr.String()))
	}
	dec := json.NewDecoder(&stdout)
	for {
		var p listed
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("notices: go list output: %w", err)
		}
		if p.Standard || p.Module == nil || p.Module.Main {
			continue
		}
		m := *p.Module
		if m.Replace != nil {
			m = *m.Replace
		}
		if m.Dir == "" {
			return fmt.Errorf("notices: %s %s is not in the module cache (go mod download)", m.Path, m.Version)
		}
		found[m.Path+" "+m.Version] = m
	}
}

// goModule is the standard library and runtime: Go's LICENSE and PATENTS
// from GOROOT, at the toolchain's version.
func goModule(ctx context.Context, goCmd, dir string) (Module, error) {
	cmd := exec.CommandContext(ctx, goCmd, "env", "GOROOT", "GOVERSION")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return Module{}, fmt.Errorf("notices: go env: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return Module{}, fmt.Errorf("notices: go env printed %q", out)
	}
	return readModule("stdlib", f[1], filepath.Clean(f[0]))
}
