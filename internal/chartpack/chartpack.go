// Package chartpack packages the Helm chart reproducibly and publishes it
// to an OCI registry. `helm package` stamps every tar entry with the time
// it ran and `helm push` annotates the manifest with the time it ran, so
// two releases of one commit gave two digests. Here the archive is written
// with fixed headers (mtime = the commit's time, mode 0644, uid/gid 0, files
// in lexical order) and the manifest's creation time is the same time: one
// commit, one chart digest.
//
// The package also points the chart at the release's image: values.yaml's
// image.repository becomes IMAGE_REPO, and appVersion (the default tag)
// the release's version.
//
// It is release tooling, used by cmd/kse-chart; the exporter never links it.
package chartpack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

// Options say what goes into the package.
type Options struct {
	Version    string // the chart's SemVer (the tag without "v")
	AppVersion string // the image tag the chart runs by default (the tag)
	// ImageRepository, when set, replaces values.yaml's image.repository.
	ImageRepository string
	// Created is every entry's mtime and the manifest's creation time.
	Created time.Time
}

// Validate checks the options without touching anything.
func (o Options) Validate() error {
	if !semver.MatchString(o.Version) {
		return fmt.Errorf("chartpack: version %q: want SemVer X.Y.Z[-pre]", o.Version)
	}
	if o.AppVersion == "" || strings.ContainsAny(o.AppVersion, "\"\\\n") {
		return fmt.Errorf("chartpack: app version %q: want a plain tag", o.AppVersion)
	}
	if o.ImageRepository != "" {
		if _, err := name.NewRepository(o.ImageRepository); err != nil {
			return fmt.Errorf("chartpack: image repository %q: %w", o.ImageRepository, err)
		}
	}
	return nil
}

var semver = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// Chart is a packaged chart.
type Chart struct {
	Name      string
	Version   string
	ChartYAML []byte // the packaged Chart.yaml
	Archive   []byte // the .tgz
}

// FileName is helm's name for the archive, <name>-<version>.tgz.
func (c *Chart) FileName() string { return c.Name + "-" + c.Version + ".tgz" }

// Package reads the chart in dir (honouring its .helmignore) and returns
// the archive.
func Package(dir string, o Options) (*Chart, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ign, err := readIgnore(filepath.Join(dir, ".helmignore"))
	if err != nil {
		return nil, err
	}
	files, err := collect(dir, ign)
	if err != nil {
		return nil, err
	}
	chartYAML, ok := files["Chart.yaml"]
	if !ok {
		return nil, fmt.Errorf("chartpack: %s has no Chart.yaml", dir)
	}
	chartName, err := topLevel(chartYAML, "name")
	if err != nil {
		return nil, err
	}
	if chartYAML, err = setTopLevel(chartYAML, "version", o.Version); err != nil {
		return nil, err
	}
	if chartYAML, err = setTopLevel(chartYAML, "appVersion", strconv.Quote(o.AppVersion)); err != nil {
		return nil, err
	}
	files["Chart.yaml"] = chartYAML
	if o.ImageRepository != "" {
		values, ok := files["values.yaml"]
		if !ok {
			return nil, fmt.Errorf("chartpack: %s has no values.yaml", dir)
		}
		from, err := imageRepository(values)
		if err != nil {
			return nil, err
		}
		if files["values.yaml"], err = setImageRepository(values, o.ImageRepository); err != nil {
			return nil, err
		}
		// The README (helm show readme, Artifact Hub) names the default
		// image in its values table and prose: it follows values.yaml.
		if readme, ok := files["README.md"]; ok && from != o.ImageRepository {
			files["README.md"] = replaceRepository(readme, from, o.ImageRepository)
		}
	}
	archive, err := writeArchive(chartName, files, o.Created)
	if err != nil {
		return nil, err
	}
	return &Chart{Name: chartName, Version: o.Version, ChartYAML: chartYAML, Archive: archive}, nil
}

// collect reads every file not ignored, keyed by its slash path.
func collect(dir string, ign *ignore) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if ign.ignored(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("chartpack: %s is not a regular file", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[rel] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chartpack: %w", err)
	}
	return files, nil
}

// writeArchive writes <name>/<file> entries, Chart.yaml first (where helm
// puts it) and the rest in lexical order, every header fixed but the name
// and size, into a gzip stream with no name and no time.
func writeArchive(chartName string, files map[string][]byte, mtime time.Time) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		if n != "Chart.yaml" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	names = append([]string{"Chart.yaml"}, names...)
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, n := range names {
		h := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     path.Join(chartName, n),
			Mode:     0o644,
			Size:     int64(len(files[n])),
			ModTime:  mtime.UTC().Truncate(time.Second),
			Format:   tar.FormatPAX,
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("chartpack: tar %s: %w", n, err)
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, fmt.Errorf("chartpack: tar %s: %w", n, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// topLevel returns the value of a top-level scalar key of a YAML file.
func topLevel(doc []byte, key string) (string, error) {
	m := regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(key)+`:[ \t]*(.*?)[ \t]*$`).FindAllSubmatch(doc, -1)
	if len(m) != 1 {
		return "", fmt.Errorf("chartpack: Chart.yaml: want one top-level %s, found %d", key, len(m))
	}
	return strings.Trim(string(m[0][1]), `"'`), nil
}

// setTopLevel rewrites one top-level scalar line, keeping every comment and
// the rest of the file byte for byte.
func setTopLevel(doc []byte, key, value string) ([]byte, error) {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `:.*$`)
	if n := len(re.FindAllIndex(doc, -1)); n != 1 {
		return nil, fmt.Errorf("chartpack: Chart.yaml: want one top-level %s, found %d", key, n)
	}
	return re.ReplaceAllLiteral(doc, []byte(key+": "+value)), nil
}

// setImageRepository rewrites the repository line of values.yaml's
// top-level image block, keeping its comments (the chart's README is
// generated from them).
func setImageRepository(values []byte, repo string) ([]byte, error) {
	lines := strings.SplitAfter(string(values), "\n")
	inImage, done := false, false
	for i, l := range lines {
		trimmed := strings.TrimRight(l, "\r\n")
		if trimmed != "" && !strings.HasPrefix(trimmed, " ") && !strings.HasPrefix(trimmed, "#") {
			inImage = trimmed == "image:"
			continue
		}
		if inImage && strings.HasPrefix(trimmed, "  repository:") {
			lines[i] = "  repository: " + repo + "\n"
			done = true
			break
		}
	}
	if !done {
		return nil, fmt.Errorf("chartpack: values.yaml has no image.repository line")
	}
	return []byte(strings.Join(lines, "")), nil
}

// imageRepository reads the repository line of values.yaml's image block.
func imageRepository(values []byte) (string, error) {
	m := regexp.MustCompile(`(?m)^image:\s*\n(?:(?:\s*#.*|  .*)\n)*?  repository:\s*"?([^"\s]+)"?\s*$`).FindSubmatch(values)
	if m == nil {
		return "", fmt.Errorf("chartpack: values.yaml has no image.repository line")
	}
	return string(m[1]), nil
}

// replaceRepository replaces the repository from by to wherever it stands
// as a whole image name (followed by a tag, quote, space or the end), not
// inside a longer name such as the chart's own OCI repository.
func replaceRepository(doc []byte, from, to string) []byte {
	re := regexp.MustCompile(regexp.QuoteMeta(from) + `([:"'` + "`" + `\s)]|$)`)
	return re.ReplaceAll(doc, []byte(to+"$1"))
}
