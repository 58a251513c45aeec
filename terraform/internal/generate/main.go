// Command generate writes every generated file of the repository (see
// package gen). It runs in the terraform directory: `make generate`, or
// `go generate ./terraform/...`.
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
)

func main() {
	files, err := gen.Files()
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
	for _, f := range files {
		if old, err := os.ReadFile(f.Path); err == nil && bytes.Equal(old, f.Content) {
			continue
		}
		if err := os.WriteFile(f.Path, f.Content, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "generate:", err)
			os.Exit(1)
		}
		fmt.Println("generate: wrote", f.Path)
	}
}
