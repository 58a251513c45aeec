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

// License is the project's licence, an SPDX identifier: the default of the
// licenses label, the binaries' declared licence in the SBOM and the chart's
// annotation (the repository's LICENSE file holds the text).
const License = "Apache-2.0"

// goLicense is the Go distribution's licence (its LICENSE file is the
// 3-clause BSD text), declared for the standard library package.
const goLicense = "BSD-3-Clause"

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
	Purpose          string         `json:"primaryPackagePurpose,omitempty"`
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
// SHA-256), one for the Go standard library of the toolchain that built
// them, and one per Go module linked into them, read from the module
// information the go command embeds, so the list is what was compiled and
// nothing the tests alone use. licenses are the SPDX expressions of
// THIRD_PARTY_NOTICES ("path version" -> expression, "stdlib"; see package
// notices), so the SBOM and the notices name one licence per module; a
// linked module the notices lack is an error. Without them (nil) the
// modules' licences are NOASSERTION.
func SPDX(cfg Config, binaries map[string]string, licenses map[string]string) ([]byte, error) {
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
	goVersion := ""
	var binIDs []string
	for _, p := range platforms {
		bi, err := buildinfo.ReadFile(binaries[p])
		if err != nil {
			return nil, fmt.Errorf("imagebuild: build info of %s: %w", binaries[p], err)
		}
		if goVersion != "" && bi.GoVersion != goVersion {
			return nil, fmt.Errorf("imagebuild: %s was built with %s, the others with %s", binaries[p], bi.GoVersion, goVersion)
		}
		goVersion = bi.GoVersion
		sum, err := fileSHA256(binaries[p])
		if err != nil {
			return nil, err
		}
		id := "SPDXRef-Binary-" + strings.ReplaceAll(p, "/", "-")
		binIDs = append(binIDs, id)
		doc.Packages = append(doc.Packages, spdxPackage{
			SPDXID: id, Name: "kubecost-s3-exporter", VersionInfo: cfg.Version,
			DownloadLocation: cfg.Source, LicenseConcluded: "NOASSERTION", LicenseDeclared: orNoAssertion(cfg.Licenses),
			Checksums: []spdxChecksum{{Algorithm: "SHA256", ChecksumValue: sum}},
			Purpose:   "APPLICATION",
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
	if goVersion != "" {
		std := stdlibPackage(goVersion)
		if id, ok := licenses["stdlib"]; ok {
			std.LicenseDeclared, std.LicenseConcluded = id, id
		}
		doc.Packages = append(doc.Packages, std)
		for _, b := range binIDs {
			doc.Relationships = append(doc.Relationships, spdxRelationship{b, "DEPENDS_ON", stdlibID})
		}
	}
	if err := addModules(&doc, modules, binIDs, licenses); err != nil {
		return nil, err
	}
	return json.MarshalIndent(doc, "", "  ")
}

// addModules adds one package per module (path -> version), each a
// dependency of every binary, with its licence from licenses when given.
func addModules(doc *spdxDoc, modules map[string]string, binIDs []string, licenses map[string]string) error {
	paths := make([]string, 0, len(modules))
	for p := range modules {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for i, p := range paths {
		id := fmt.Sprintf("SPDXRef-Module-%d", i)
		lic := "NOASSERTION"
		if licenses != nil {
			if lic = licenses[p+" "+modules[p]]; lic == "" {
				return fmt.Errorf("imagebuild: %s %s is linked but not in THIRD_PARTY_NOTICES: run make notices", p, modules[p])
			}
		}
		doc.Packages = append(doc.Packages, spdxPackage{
			SPDXID: id, Name: p, VersionInfo: modules[p], DownloadLocation: "NOASSERTION",
			LicenseConcluded: lic, LicenseDeclared: lic,
			ExternalRefs: []spdxRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + p + "@" + modules[p]}},
			Purpose:      "LIBRARY",
		})
		for _, b := range binIDs {
			doc.Relationships = append(doc.Relationships, spdxRelationship{b, "DEPENDS_ON", id})
		}
	}
	return nil
}

const stdlibID = "SPDXRef-Go-stdlib"

// stdlibPackage is the standard library compiled into the binaries. Its
// name and purl are the ones vulnerability scanners match Go standard
// library advisories on (name "stdlib", pkg:golang/stdlib@<version without
// "go">, as the Go vulnerability database's "stdlib" module), and the CPE
// is the one NVD records Go advisories under. goVersion is the binary's
// runtime version, "go1.26.8" (possibly with a suffix such as
// " X:boringcrypto", which is dropped).
func stdlibPackage(goVersion string) spdxPackage {
	v, _, _ := strings.Cut(goVersion, " ")
	bare := strings.TrimPrefix(v, "go")
	return spdxPackage{
		SPDXID: stdlibID, Name: "stdlib", VersionInfo: v,
		DownloadLocation: "https://go.dev/dl/", LicenseConcluded: "NOASSERTION", LicenseDeclared: goLicense,
		ExternalRefs: []spdxRef{
			{"PACKAGE-MANAGER", "purl", "pkg:golang/stdlib@" + bare},
			{"SECURITY", "cpe23Type", "cpe:2.3:a:golang:go:" + bare + ":*:*:*:*:*:*:*"},
		},
		Purpose: "LIBRARY",
		Comment: "the Go standard library and runtime of the toolchain " + v + " that built the binaries",
	}
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
