package imagebuild

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// SBOMMediaType is the SPDX JSON media type, used for the SBOM's layer and
// as the artifact type of the manifest that attaches it to the index.
const SBOMMediaType = "application/spdx+json"

// spdxDoc is the part of SPDX 2.3 the SBOM fills in.
type spdxDoc struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreation       `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreation struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	SPDXID           string         `json:"SPDXID"`
	Name             string         `json:"name"`
	VersionInfo      string         `json:"versionInfo"`
	DownloadLocation string         `json:"downloadLocation"`
	FilesAnalyzed    bool           `json:"filesAnalyzed"`
	LicenseConcluded string         `json:"licenseConcluded"`
	LicenseDeclared  string         `json:"licenseDeclared"`
	Checksums        []spdxChecksum `json:"checksums,omitempty"`
	ExternalRefs     []spdxRef      `json:"externalRefs,omitempty"`
	Comment          string         `json:"comment,omitempty"`
}

type spdxChecksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

type spdxRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

type spdxRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// SPDX describes the binaries: one package per platform's binary (with its
// SHA-256) and one per Go module linked into it, read from the module
// information the go command embeds, so the list is what was compiled and
// nothing the tests alone use.
func SPDX(cfg Config, binaries map[string]string) ([]byte, error) {
	doc := spdxDoc{
		SPDXVersion:       "SPDX-2.3",
		DataLicense:       "CC0-1.0",
		SPDXID:            "SPDXRef-DOCUMENT",
		Name:              "kubecost-s3-exporter-" + cfg.Version,
		DocumentNamespace: strings.TrimSuffix(cfg.Source, "/") + "/sbom/" + cfg.Version + "/" + cfg.Revision,
		CreationInfo: spdxCreation{
			Created:  cfg.Created.UTC().Format("2006-01-02T15:04:05Z"),
			Creators: []string{"Tool: kse-image"},
		},
	}
	modules := map[string]string{} // path -> version, the same on every platform
	platforms := make([]string, 0, len(binaries))
	for p := range binaries {
		platforms = append(platforms, p)
	}
	slices.Sort(platforms)
	for _, p := range platforms {
		bi, err := buildinfo.ReadFile(binaries[p])
		if err != nil {
			return nil, fmt.Errorf("imagebuild: build info of %s: %w", binaries[p], err)
		}
		sum, err := fileSHA256(binaries[p])
		if err != nil {
			return nil, err
		}
		id := "SPDXRef-Binary-" + strings.ReplaceAll(p, "/", "-")
		doc.Packages = append(doc.Packages, spdxPackage{
			SPDXID: id, Name: "kubecost-s3-exporter", VersionInfo: cfg.Version,
			DownloadLocation: cfg.Source, LicenseConcluded: "NOASSERTION", LicenseDeclared: orNoAssertion(cfg.Licenses),
			Checksums: []spdxChecksum{{Algorithm: "SHA256", ChecksumValue: sum}},
			Comment:   fmt.Sprintf("%s binary built with %s", p, bi.GoVersion),
		})
		doc.Relationships = append(doc.Relationships, spdxRelationship{"SPDXRef-DOCUMENT", "DESCRIBES", id})
		for _, d := range bi.Deps {
			m := d
			if d.Replace != nil {
				m = d.Replace
			}
			modules[m.Path] = m.Version
		}
	}
	paths := make([]string, 0, len(modules))
	for p := range modules {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for i, p := range paths {
		id := fmt.Sprintf("SPDXRef-Module-%d", i)
		doc.Packages = append(doc.Packages, spdxPackage{
			SPDXID: id, Name: p, VersionInfo: modules[p], DownloadLocation: "NOASSERTION",
			LicenseConcluded: "NOASSERTION", LicenseDeclared: "NOASSERTION",
			ExternalRefs: []spdxRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + p + "@" + modules[p]}},
		})
		for _, plat := range platforms {
			doc.Relationships = append(doc.Relationships, spdxRelationship{"SPDXRef-Binary-" + strings.ReplaceAll(plat, "/", "-"), "DEPENDS_ON", id})
		}
	}
	return json.MarshalIndent(doc, "", "  ")
}

func orNoAssertion(s string) string {
	if s == "" {
		return "NOASSERTION"
	}
	return s
}

func fileSHA256(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
