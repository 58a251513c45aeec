package imagebuild

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SLSA v1 build provenance (https://slsa.dev/spec/v1.0/provenance). The
// release signs it as an in-toto attestation twice: for the image index
// (cosign attest) and for each binary (cosign attest-blob); the statement's
// subject is added by cosign, so one predicate serves every artifact.
const (
	ProvenancePredicateType = "https://slsa.dev/provenance/v1"
	// ProvenanceBuildType names this build's recipe: docs/release.md
	// describes the parameters.
	ProvenanceBuildType = "https://github.com/kubecost-s3-exporter/kubecost-s3-exporter/blob/main/docs/release.md#provenance"
)

// BuildRun says who built what: the workflow run in the release, the
// maintainer's machine otherwise.
type BuildRun struct {
	// Ref is the git ref built, refs/tags/vX.Y.Z in the release.
	Ref string
	// Workflow is the workflow file, .github/workflows/release.yml.
	Workflow string
	// BuilderID identifies the builder: the workflow at its ref
	// (https://github.com/OWNER/REPO/.github/workflows/release.yml@refs/tags/vX.Y.Z).
	BuilderID string
	// InvocationID is the run (https://github.com/OWNER/REPO/actions/runs/ID/attempts/N).
	InvocationID string
}

type provenance struct {
	BuildDefinition buildDefinition `json:"buildDefinition"`
	RunDetails      runDetails      `json:"runDetails"`
}

type buildDefinition struct {
	BuildType            string               `json:"buildType"`
	ExternalParameters   externalParameters   `json:"externalParameters"`
	InternalParameters   internalParameters   `json:"internalParameters"`
	ResolvedDependencies []resourceDescriptor `json:"resolvedDependencies"`
}

type externalParameters struct {
	Workflow  workflowRef `json:"workflow"`
	Version   string      `json:"version"`
	Platforms []string    `json:"platforms"`
}

type workflowRef struct {
	Ref        string `json:"ref"`
	Repository string `json:"repository"`
	Path       string `json:"path"`
}

type internalParameters struct {
	Toolchain string `json:"toolchain"`
	GoBuild   string `json:"goBuild"`
	Base      string `json:"base"`
}

type resourceDescriptor struct {
	URI    string            `json:"uri"`
	Digest map[string]string `json:"digest,omitempty"`
	Name   string            `json:"name,omitempty"`
}

type runDetails struct {
	Builder  builder     `json:"builder"`
	Metadata runMetadata `json:"metadata"`
}

type builder struct {
	ID      string            `json:"id"`
	Version map[string]string `json:"version,omitempty"`
}

type runMetadata struct {
	InvocationID string `json:"invocationId,omitempty"`
}

// Provenance is the SLSA v1 predicate of a build: the source commit, the
// workflow, the Go toolchain that compiled the binaries (read from them)
// and the base image. It holds no clock reading, so two builds of one
// commit by one run give the same bytes.
func Provenance(cfg Config, run BuildRun, binaries map[string]string) ([]byte, error) {
	toolchain, err := toolchainOf(binaries)
	if err != nil {
		return nil, err
	}
	platforms := make([]string, 0, len(cfg.Platforms))
	for _, p := range cfg.Platforms {
		platforms = append(platforms, p.OS+"/"+p.Architecture)
	}
	src := strings.TrimSuffix(cfg.Source, "/")
	deps := []resourceDescriptor{{
		URI:    "git+" + src + "@" + run.Ref,
		Digest: map[string]string{"gitCommit": cfg.Revision},
	}, {
		URI:  "pkg:golang/stdlib@" + strings.TrimPrefix(toolchain, "go"),
		Name: toolchain,
	}}
	if b := cfg.Base; b != "" && b != LocalBase {
		repo, digest, _ := strings.Cut(b, "@")
		alg, hex, _ := strings.Cut(digest, ":")
		deps = append(deps, resourceDescriptor{URI: "oci://" + repo, Digest: map[string]string{alg: hex}, Name: "base image"})
	}
	p := provenance{
		BuildDefinition: buildDefinition{
			BuildType: ProvenanceBuildType,
			ExternalParameters: externalParameters{
				Workflow:  workflowRef{Ref: run.Ref, Repository: src, Path: run.Workflow},
				Version:   cfg.Version,
				Platforms: platforms,
			},
			InternalParameters: internalParameters{
				Toolchain: toolchain,
				GoBuild:   "CGO_ENABLED=0 go build -trimpath -ldflags '-s -w -X " + VersionVar + "=" + cfg.Version + "' " + Package,
				Base:      orLocal(cfg.Base),
			},
			ResolvedDependencies: deps,
		},
		RunDetails: runDetails{
			Builder:  builder{ID: run.BuilderID, Version: map[string]string{"go": toolchain}},
			Metadata: runMetadata{InvocationID: run.InvocationID},
		},
	}
	if p.RunDetails.Builder.ID == "" {
		return nil, fmt.Errorf("imagebuild: provenance: no builder id")
	}
	return json.MarshalIndent(p, "", "  ")
}

// WriteProvenance writes the predicate next to the binaries.
func WriteProvenance(binDir, version string, pred []byte) (string, error) {
	path := filepath.Join(binDir, "kubecost-s3-exporter_"+version+".provenance.json")
	if err := os.WriteFile(path, pred, 0o644); err != nil {
		return "", fmt.Errorf("imagebuild: %w", err)
	}
	return path, nil
}

func orLocal(base string) string {
	if base == "" {
		return LocalBase
	}
	return base
}
