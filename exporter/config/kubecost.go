package config

import (
	"cmp"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
)

// With KUBECOST_API_ENDPOINT unset, cli asks where a Helm install of Kubecost answers
// (kubecost.Candidates), Kubecost 3.x's frontend first: a new install runs 3.x, whose chart
// has no cost-analyzer service, the default this variable had before.

// releaseRE is a Helm release name: Helm 3 accepts at most 53 characters of a DNS label, so
// that the chart's "-suffix" names fit.
var releaseRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$`)

const (
	dnsLabelAccepted = "a Kubernetes namespace name (1-63 of a-z 0-9 -, starting and ending with a letter or digit)"
	releaseAccepted  = "a Helm release name (1-53 of a-z 0-9 -, starting and ending with a letter or digit)"
)

// Discovering reports whether the run must find Kubecost itself.
func (c *Config) Discovering() bool { return c.KubecostAPIEndpoint == "" }

// AllocationPath is the path appended to the base URL.
func (c *Config) AllocationPath() string {
	return cmp.Or(c.KubecostAPIPath, kubecost.Flavor(c.KubecostAPIFlavor).Path())
}

// Headers are the parsed KUBECOST_HTTP_HEADERS_FILE, nil when unset.
// Call it only on a validated Config.
func (c *Config) Headers() http.Header { return c.headers.Clone() }

// checkDiscovery: discovery knows where Kubecost's Helm chart puts its
// API, not where an OpenCost or a bare cost-model container listens.
func checkDiscovery(c *Config, bad badFunc) {
	// An unknown flavour is KUBECOST_API_FLAVOR's error alone.
	if f := kubecost.Flavor(c.KubecostAPIFlavor); slices.Contains(kubecost.Flavors(), f) && !f.Discovered() {
		bad("", "required with KUBECOST_API_FLAVOR=%s: the URL of the server (only a Kubecost frontend, flavour %s, is found without it)",
			f, kubecost.FlavorKubecost)
	}
}

// readHeadersFile reads and parses KUBECOST_HTTP_HEADERS_FILE for Load.
func readHeadersFile(path string) (http.Header, error) {
	b, err := exporter.ReadFileMax(path, maxMapFile) // the same size cap: a headers file is a few lines
	if err != nil {
		return nil, err
	}
	return exporter.ParseHeaders(b)
}

// checkHeadersFile reports why the headers file could not be read or
// parsed; the error names a line, never a value.
func checkHeadersFile(c *Config, bad badFunc) {
	if c.HeadersFile == "" {
		return
	}
	if c.headersErr != nil {
		msg := strings.TrimPrefix(c.headersErr.Error(), exporter.HeadersSetting+": ")
		bad(c.HeadersFile, "%s", strings.TrimPrefix(msg, exporter.HeadersSetting+" "))
		return
	}
	if c.headers.Get("Authorization") != "" && (c.BearerFile != "" || c.BearerSecret != "") {
		bad(c.HeadersFile, "an Authorization header and a bearer token (KUBECOST_BEARER_TOKEN_*): give one of them")
	}
}
