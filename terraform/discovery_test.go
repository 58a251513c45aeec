package terraform_test

import (
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
)

// TestExporterModuleDiscovers: by default the module leaves the Kubecost
// endpoint empty, so the exporter finds Kubecost (3.x first) under
// Kubecost's own default namespace and release; a set endpoint, namespace
// and release reach both the chart values and the plain environment, and
// the exporter accepts that environment.
func TestExporterModuleDiscovers(t *testing.T) {
	for _, tc := range []struct {
		in   map[string]any
		want [3]string // endpoint, namespace, release
	}{
		{nil, [3]string{"", "kubecost", "kubecost"}},
		{map[string]any{"kubecost_namespace": "finops", "kubecost_release": "kc"}, [3]string{"", "finops", "kc"}},
		{map[string]any{"kubecost_api_endpoint": "http://kubecost-frontend.kubecost:9090"}, [3]string{"http://kubecost-frontend.kubecost:9090", "kubecost", "kubecost"}},
	} {
		s := exporterScope(t, otherAccount, "eu-west-1", sampleCluster, "", tc.in)
		ex := output(t, s, "helm_values").GetAttr("exporter")
		env := output(t, s, "env").AsValueMap()
		got := [3]string{ex.GetAttr("kubecostApiEndpoint").AsString(), ex.GetAttr("kubecostNamespace").AsString(), ex.GetAttr("kubecostRelease").AsString()}
		gotEnv := [3]string{env["KUBECOST_API_ENDPOINT"].AsString(), env["KUBECOST_NAMESPACE"].AsString(), env["KUBECOST_RELEASE"].AsString()}
		if got != tc.want || gotEnv != tc.want {
			t.Errorf("%v: chart values %q, env %q, want %q", tc.in, got, gotEnv, tc.want)
		}
		plain := map[string]string{}
		for k, v := range env {
			plain[k] = v.AsString()
		}
		if _, err := config.Load(func(k string) (string, bool) { v, ok := plain[k]; return v, ok }); err != nil {
			t.Errorf("%v: the exporter rejects the module's env: %v", tc.in, err)
		}
	}
}
