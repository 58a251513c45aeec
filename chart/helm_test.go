package chart_test

// Helpers shared by the chart tests: finding helm, rendering the chart and
// decoding every rendered document strictly into its Kubernetes API type.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/tooltest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const (
	release   = "kubecost-s3-exporter"
	namespace = "kubecost-s3-exporter"
	// The two values the chart cannot default.
	clusterARN = "arn:aws:eks:us-east-1:111122223333:cluster/prod"
	bucket     = "cca-data-prod"
)

// required are the --set flags every rendering needs.
var required = []string{"--set", "exporter.clusterId=" + clusterARN, "--set", "exporter.s3BucketName=" + bucket}

// withRequired returns the required flags followed by args, in a new slice.
func withRequired(args ...string) []string { return append(slices.Clone(required), args...) }

var (
	helmOnce sync.Once
	helmPath string
)

// helm returns the helm binary: $HELM_BIN, else the cache of
// .ci/install-tools.sh, else $PATH. Without one the test is skipped, except
// in CI (CI set), where that is a failure.
func helm(t *testing.T) string {
	t.Helper()
	helmOnce.Do(func() { helmPath = tooltest.Require(t, "helm", "HELM_BIN") })
	if helmPath == "" {
		t.Skip("helm not found")
	}
	return helmPath
}

// runHelm runs helm in the chart directory and returns stdout, stderr and
// the error.
func runHelm(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(helm(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Keep the user's helm configuration and repositories out of the tests.
	dir := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(dir, "config"),
		"HELM_CACHE_HOME="+filepath.Join(dir, "cache"),
		"HELM_DATA_HOME="+filepath.Join(dir, "data"),
	)
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// templateArgs is `helm template` of the chart in this directory.
func templateArgs(extra ...string) []string {
	return append([]string{"template", release, ".", "--namespace", namespace}, extra...)
}

// render runs helm template with args and decodes the output; it fails the
// test when helm fails.
func render(t *testing.T, args ...string) *rendered {
	t.Helper()
	out, stderr, err := runHelm(t, templateArgs(args...)...)
	if err != nil {
		t.Fatalf("helm template %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return decode(t, out)
}

// rendered is one `helm template` output, decoded.
type rendered struct {
	raw             string
	cronJobs        []*batchv1.CronJob
	jobs            []*batchv1.Job
	serviceAccounts []*corev1.ServiceAccount
	prometheusRules []*monitoringv1.PrometheusRule
	objects         []object // every document, in order
}

// object is the metadata every rendered document shares.
type object struct {
	Kind, Name, Namespace string
	Labels, Annotations   map[string]string
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decode splits a multi-document YAML stream and decodes each document
// strictly into its Kubernetes type: an unknown field, a wrong type, a
// duplicate key or an unknown kind fails the test.
func decode(t *testing.T, stream string) *rendered {
	t.Helper()
	r := &rendered{raw: stream}
	for i, doc := range docSep.Split(stream, -1) {
		if isBlank(doc) {
			continue
		}
		js, err := yaml.YAMLToJSONStrict([]byte(doc))
		if err != nil {
			t.Fatalf("document %d is not valid YAML: %v\n%s", i, err, doc)
		}
		var tm struct{ APIVersion, Kind string }
		if err := json.Unmarshal(js, &tm); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var target interface {
			GetName() string
			GetNamespace() string
			GetLabels() map[string]string
			GetAnnotations() map[string]string
		}
		switch gvk := tm.APIVersion + "/" + tm.Kind; gvk {
		case "batch/v1/CronJob":
			o := &batchv1.CronJob{}
			r.cronJobs, target = append(r.cronJobs, o), o
		case "batch/v1/Job":
			o := &batchv1.Job{}
			r.jobs, target = append(r.jobs, o), o
		case "v1/ServiceAccount":
			o := &corev1.ServiceAccount{}
			r.serviceAccounts, target = append(r.serviceAccounts, o), o
		case "monitoring.coreos.com/v1/PrometheusRule":
			o := &monitoringv1.PrometheusRule{}
			r.prometheusRules, target = append(r.prometheusRules, o), o
		default:
			t.Fatalf("document %d has an unexpected kind %q; add it to decode()\n%s", i, gvk, doc)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(target); err != nil {
			t.Fatalf("document %d (%s) does not decode strictly into its API type: %v\n%s", i, tm.Kind, err, doc)
		}
		r.objects = append(r.objects, object{
			Kind: tm.Kind, Name: target.GetName(), Namespace: target.GetNamespace(),
			Labels: target.GetLabels(), Annotations: target.GetAnnotations(),
		})
	}
	return r
}

// isBlank reports whether a document holds only comments and whitespace.
func isBlank(doc string) bool {
	for _, line := range strings.Split(doc, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

func (r *rendered) cronJob(t *testing.T) *batchv1.CronJob {
	t.Helper()
	if len(r.cronJobs) != 1 {
		t.Fatalf("want 1 CronJob, got %d", len(r.cronJobs))
	}
	return r.cronJobs[0]
}

// exportJob returns the hook Job, or nil when none was rendered.
func (r *rendered) exportJob(t *testing.T) *batchv1.Job {
	t.Helper()
	switch len(r.jobs) {
	case 0:
		return nil
	case 1:
		return r.jobs[0]
	}
	t.Fatalf("want at most 1 Job, got %d", len(r.jobs))
	return nil
}

// podSpecs returns the pod specs of the CronJob and of the export Job.
func (r *rendered) podSpecs(t *testing.T) map[string]*corev1.PodSpec {
	t.Helper()
	specs := map[string]*corev1.PodSpec{"CronJob": &r.cronJob(t).Spec.JobTemplate.Spec.Template.Spec}
	if j := r.exportJob(t); j != nil {
		specs["Job"] = &j.Spec.Template.Spec
	}
	return specs
}

// exporterContainer returns the one container of a pod spec.
func exporterContainer(t *testing.T, spec *corev1.PodSpec) *corev1.Container {
	t.Helper()
	if len(spec.Containers) != 1 || spec.Containers[0].Name != "exporter" {
		t.Fatalf("want one container named exporter, got %+v", spec.Containers)
	}
	return &spec.Containers[0]
}

// envMap returns the container's literal env values; valueFrom entries map
// to "<valueFrom>". A duplicate name fails the test.
func envMap(t *testing.T, c *corev1.Container) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, e := range c.Env {
		if _, dup := m[e.Name]; dup {
			t.Errorf("env %s is set twice", e.Name)
		}
		m[e.Name] = e.Value
		if e.ValueFrom != nil {
			m[e.Name] = "<valueFrom>"
		}
	}
	return m
}

// fixtures returns the files matching pattern, failing when there are none.
func fixtures(t *testing.T, pattern string, atLeast int) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < atLeast {
		t.Fatalf("%s: want at least %d fixtures, found %d", pattern, atLeast, len(files))
	}
	return files
}

// readValues parses a values YAML file into a generic map.
func readValues(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// dig walks nested maps; it returns nil when a key is missing.
func dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

// renderScalar formats a values.yaml scalar as the chart renders it into
// an environment variable.
func renderScalar(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any:
		parts := make([]string, len(v))
		for i, p := range v {
			parts[i] = renderScalar(p)
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

func isTrue(b *bool) bool { return b != nil && *b }

func is(p *int64, want int64) bool { return p != nil && *p == want }
