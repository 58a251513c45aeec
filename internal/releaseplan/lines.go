package releaseplan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Keys are the state's facts that the publish decision needs: a run whose
// gathering failed half-way must not read as "absent" and publish again.
var Keys = []string{"image", "image-sbom", "image-signature", "sbom-attestation", "chart", "chart-signature", "sums-signature"}

// ParseState reads the state lines: "key=present|absent" for Keys (as
// kse-image -check, kse-chart -check and kse-release registry-state and
// github-state print them) and "provenance HEX" per digest attested for
// the tag. Other "key=value" lines of those commands (release=draft) are
// for the log and ignored.
// With publish set, every key of Keys must be there.
func ParseState(data []byte, publish bool) (State, error) {
	st := State{Provenance: map[string]bool{}}
	seen := map[string]bool{}
	flags := map[string]*bool{"image": &st.Image, "image-sbom": &st.ImageSBOM, "image-signature": &st.ImageSignature,
		"sbom-attestation": &st.SBOMAttestation, "chart": &st.Chart, "chart-signature": &st.ChartSignature, "sums-signature": &st.SumsSignature}
	for n, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case len(f) == 1 && strings.Contains(f[0], "="):
			k, v, _ := strings.Cut(f[0], "=")
			ptr, ok := flags[k]
			if !ok && infoKeys[k] {
				continue
			}
			if !ok || (v != "present" && v != "absent") {
				return st, fmt.Errorf("releaseplan: state line %d: %q", n+1, line)
			}
			*ptr, seen[k] = v == "present", true
		case f[0] == "provenance" && len(f) == 2:
			st.Provenance[strings.TrimPrefix(f[1], "sha256:")] = true
		default:
			return st, fmt.Errorf("releaseplan: state line %d: %q", n+1, line)
		}
	}
	if publish {
		for _, k := range Keys {
			if !seen[k] {
				return st, fmt.Errorf("releaseplan: the state says nothing about %s: its check did not run", k)
			}
		}
	}
	return st, nil
}

// LoadWant reads what `make release-build` left in dir: SHA256SUMS and the
// files it names, image.digest and chart.digest.
func LoadWant(dir string) (Want, error) {
	w := Want{Files: map[string]File{}}
	sums, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		return w, fmt.Errorf("releaseplan: %w", err)
	}
	w.Files[SumsFile] = fileOf(sums)
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || strings.ContainsAny(name, "/\\") {
			return w, fmt.Errorf("releaseplan: %s: line %q", SumsFile, line)
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return w, fmt.Errorf("releaseplan: %w", err)
		}
		if f := fileOf(data); f.SHA256 != sum {
			return w, fmt.Errorf("releaseplan: %s is %s, %s says %s", name, f.SHA256, SumsFile, sum)
		}
		w.Files[name] = fileOf(data)
	}
	w.ImageDigest, w.ChartDigest, err = LoadDigests(dir)
	return w, err
}

// LoadDigests reads image.digest and chart.digest from dir: what the
// registry must hold, for kse-release registry-state.
func LoadDigests(dir string) (image, chart string, err error) {
	for _, d := range []struct {
		file string
		to   *string
	}{{"image.digest", &image}, {"chart.digest", &chart}} {
		data, err := os.ReadFile(filepath.Join(dir, d.file))
		if err != nil {
			return "", "", fmt.Errorf("releaseplan: %w", err)
		}
		*d.to = strings.TrimSpace(string(data))
	}
	return image, chart, nil
}

// infoKeys are lines github-state prints for the log, not for the plan.
var infoKeys = map[string]bool{"release": true, "release-immutable": true}

func fileOf(data []byte) File {
	sum := sha256.Sum256(data)
	return File{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}
}

// Outputs are the plan of one scope as the workflow's step outputs
// (key=value lines for $GITHUB_OUTPUT): booleans as true/false, lists
// space-separated, files as paths under dir. For the provenance scope the
// files without provenance become a checksums file in dir,
// provenance.sha256, for actions/attest's subject-checksums.
func (p Plan) Outputs(scope, dir string, want Want) (string, error) {
	var b strings.Builder
	switch scope {
	case "provenance":
		var sums bytes.Buffer
		for _, n := range p.ProvenanceFiles {
			fmt.Fprintf(&sums, "%s  %s\n", want.Files[n].SHA256, n)
		}
		if err := os.WriteFile(filepath.Join(dir, "provenance.sha256"), sums.Bytes(), 0o644); err != nil {
			return "", fmt.Errorf("releaseplan: %w", err)
		}
		fmt.Fprintf(&b, "provenance-files=%t\nprovenance-image=%t\nprovenance-chart=%t\n", len(p.ProvenanceFiles) > 0, p.ProvenanceImage, p.ProvenanceChart)
	case "publish":
		fmt.Fprintf(&b, "image-push=%t\nchart-push=%t\nsign=%s\n", p.ImagePush, p.ChartPush, strings.Join(p.Sign, " "))
	default:
		return "", fmt.Errorf("releaseplan: scope %q: want provenance or publish", scope)
	}
	fmt.Fprintf(&b, "nothing=%t\n", p.Nothing())
	return b.String(), nil
}
