package chartpack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/imagebuild"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"
)

// The media types of a Helm chart in an OCI registry (helm's
// pkg/registry/constants.go): helm pull and helm install oci:// read these.
const (
	ConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	LayerMediaType  types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// Manifest is what `helm push` would write for the chart, with the
// creation time fixed: the config is the packaged Chart.yaml as JSON (the
// chart's metadata), the one layer the archive.
func (c *Chart) Manifest(created time.Time) (raw []byte, config v1.Layer, layer v1.Layer, err error) {
	cfgJSON, err := yaml.YAMLToJSON(c.ChartYAML)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("chartpack: Chart.yaml: %w", err)
	}
	var meta struct {
		Description string `json:"description"`
		Home        string `json:"home"`
		Sources     []string
	}
	if err := json.Unmarshal(cfgJSON, &meta); err != nil {
		return nil, nil, nil, fmt.Errorf("chartpack: Chart.yaml: %w", err)
	}
	config = static.NewLayer(cfgJSON, ConfigMediaType)
	layer = static.NewLayer(c.Archive, LayerMediaType)
	cd, err := imagebuild.DescriptorOf(config, ConfigMediaType)
	if err != nil {
		return nil, nil, nil, err
	}
	ld, err := imagebuild.DescriptorOf(layer, LayerMediaType)
	if err != nil {
		return nil, nil, nil, err
	}
	ann := map[string]string{
		"org.opencontainers.image.title":       c.Name,
		"org.opencontainers.image.version":     c.Version,
		"org.opencontainers.image.description": strings.TrimSpace(meta.Description),
		"org.opencontainers.image.url":         meta.Home,
		"org.opencontainers.image.created":     created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses":    imagebuild.License,
	}
	if len(meta.Sources) > 0 {
		ann["org.opencontainers.image.source"] = meta.Sources[0]
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        cd,
		Layers:        []v1.Descriptor{ld},
		Annotations:   ann,
	}
	raw, err = json.Marshal(m)
	return raw, config, layer, err
}

// Digest is the manifest digest the chart has in any registry.
func (c *Chart) Digest(created time.Time) (v1.Hash, error) {
	raw, _, _, err := c.Manifest(created)
	if err != nil {
		return v1.Hash{}, err
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	return h, err
}

// Tag is the chart's tag in repo (oci://host/charts without the scheme):
// <repo>/<name>:<version>, with helm's "+" to "_".
func (c *Chart) Tag(repo string) (name.Tag, error) {
	repo = strings.TrimPrefix(repo, "oci://")
	return name.NewTag(repo + "/" + c.Name + ":" + strings.ReplaceAll(c.Version, "+", "_"))
}

// Push writes the chart under its version tag in repo and returns its
// digest and whether it was there already. A tag naming another digest
// stops the push before anything is written (imagebuild.ErrTagMoved).
func (c *Chart) Push(repo string, created time.Time, opts ...remote.Option) (v1.Hash, bool, error) {
	tag, err := c.Tag(repo)
	if err != nil {
		return v1.Hash{}, false, fmt.Errorf("chartpack: %w", err)
	}
	raw, config, layer, err := c.Manifest(created)
	if err != nil {
		return v1.Hash{}, false, err
	}
	digest, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return v1.Hash{}, false, err
	}
	same, err := imagebuild.CheckTag(tag, digest, opts...)
	if err != nil || same {
		return digest, same, err
	}
	for _, l := range []v1.Layer{config, layer} {
		if err := remote.WriteLayer(tag.Context(), l, opts...); err != nil {
			return v1.Hash{}, false, fmt.Errorf("chartpack: push %s: %w", tag, err)
		}
	}
	if err := remote.Put(tag, imagebuild.RawManifest(raw, types.OCIManifestSchema1), opts...); err != nil {
		return v1.Hash{}, false, fmt.Errorf("chartpack: push %s: %w", tag, err)
	}
	return digest, false, nil
}
