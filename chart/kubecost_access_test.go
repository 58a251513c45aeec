package chart_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHTTPHeadersSecret: exporter.httpHeadersExistingSecret mounts the
// Secret read-only in both pods and points KUBECOST_HTTP_HEADERS_FILE at
// it; the exporter accepts the rendered environment once the file holds
// what the Secret would.
func TestHTTPHeadersSecret(t *testing.T) {
	t.Parallel()
	helm(t)
	rd := render(t, withRequired("--set", "exporter.httpHeadersExistingSecret.name=kubecost-api-key",
		"--set", "exporter.httpHeadersExistingSecret.key=api-headers")...)
	const file = "/var/run/secrets/kubecost-s3-exporter/http-headers/api-headers"
	specs := rd.podSpecs(t)
	if len(specs) != 2 {
		t.Fatalf("%d pod specs, want the CronJob's and the export Job's", len(specs))
	}
	for kind, spec := range specs {
		c := exporterContainer(t, spec)
		env := envMap(t, c)
		if env["KUBECOST_HTTP_HEADERS_FILE"] != file {
			t.Errorf("%s: KUBECOST_HTTP_HEADERS_FILE=%q, want %s", kind, env["KUBECOST_HTTP_HEADERS_FILE"], file)
		}
		mounted := false
		for _, m := range c.VolumeMounts {
			if m.Name == "http-headers" && m.MountPath == filepath.Dir(file) && m.ReadOnly {
				mounted = true
			}
		}
		found := false
		for _, v := range spec.Volumes {
			if s := v.Secret; v.Name == "http-headers" && s != nil && s.SecretName == "kubecost-api-key" &&
				s.DefaultMode != nil && *s.DefaultMode == 0o440 && len(s.Items) == 1 && s.Items[0].Key == "api-headers" && s.Items[0].Path == "api-headers" {
				found = true
			}
		}
		if !mounted || !found {
			t.Errorf("%s: the Secret is not mounted read-only at %s (mount %v, volume %v)", kind, filepath.Dir(file), mounted, found)
		}
		local := filepath.Join(t.TempDir(), "api-headers")
		if err := os.WriteFile(local, []byte("X-API-KEY: k\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		env["KUBECOST_HTTP_HEADERS_FILE"] = local
		if err := exporterAccepts(env); err != nil {
			t.Errorf("%s: the exporter rejects the rendered environment: %v", kind, err)
		}
	}
	// Without the value, nothing is mounted and the variable is not set.
	for kind, spec := range render(t, withRequired()...).podSpecs(t) {
		if _, ok := envMap(t, exporterContainer(t, spec))["KUBECOST_HTTP_HEADERS_FILE"]; ok {
			t.Errorf("%s: KUBECOST_HTTP_HEADERS_FILE rendered without a Secret", kind)
		}
		for _, v := range spec.Volumes {
			if v.Name == "http-headers" {
				t.Errorf("%s: the headers volume is rendered without a Secret", kind)
			}
		}
	}
}

// TestDiscoveryByDefault: the chart leaves KUBECOST_API_ENDPOINT unset,
// so the exporter finds Kubecost (3.x first); the namespace and release
// it looks under are rendered when they differ from Kubecost's defaults;
// a set endpoint is passed as it is.
func TestDiscoveryByDefault(t *testing.T) {
	t.Parallel()
	helm(t)
	for _, tc := range []struct {
		args []string
		want map[string]string // "" means not rendered
	}{
		{nil, map[string]string{"KUBECOST_API_ENDPOINT": "", "KUBECOST_NAMESPACE": "", "KUBECOST_RELEASE": ""}},
		{[]string{"--set", "exporter.kubecostNamespace=finops", "--set", "exporter.kubecostRelease=kc"},
			map[string]string{"KUBECOST_API_ENDPOINT": "", "KUBECOST_NAMESPACE": "finops", "KUBECOST_RELEASE": "kc"}},
		{[]string{"--set", "exporter.kubecostApiEndpoint=http://kubecost-aggregator.kubecost:9004", "--set", "exporter.kubecostApiFlavor=cost-model"},
			map[string]string{"KUBECOST_API_ENDPOINT": "http://kubecost-aggregator.kubecost:9004", "KUBECOST_API_FLAVOR": "cost-model"}},
	} {
		for kind, spec := range render(t, withRequired(tc.args...)...).podSpecs(t) {
			env := envMap(t, exporterContainer(t, spec))
			for k, want := range tc.want {
				if got, ok := env[k]; got != want || (want == "" && ok) {
					t.Errorf("%v %s: %s=%q (set %v), want %q", tc.args, kind, k, got, ok, want)
				}
			}
			if err := exporterAccepts(env); err != nil {
				t.Errorf("%v %s: the exporter rejects the rendered environment: %v", tc.args, kind, err)
			}
		}
	}
}
