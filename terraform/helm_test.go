package terraform_test

import (
	"os"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
	"sigs.k8s.io/yaml"
)

// TestHelmValuesMatchChart checks that every value the exporter module sets
// (helm_values output, used by its helm_release) is a key of
// chart/values.yaml, so a renamed chart value cannot be silently ignored.
func TestHelmValuesMatchChart(t *testing.T) {
	b, err := os.ReadFile("../chart/values.yaml")
	if os.IsNotExist(err) {
		t.Skip("no chart/values.yaml")
	}
	if err != nil {
		t.Fatal(err)
	}
	var chart map[string]any
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatal(err)
	}
	s := exporterScope(t, otherAccount, "eu-west-1", sampleCluster, "costs/", map[string]any{"labels": []string{"app"}})
	var check func(path string, v cty.Value, c map[string]any)
	check = func(path string, v cty.Value, c map[string]any) {
		for k, sub := range v.AsValueMap() {
			cv, ok := c[k]
			if !ok {
				t.Errorf("the module sets %s%s, which chart/values.yaml does not have", path, k)
				continue
			}
			if sub.Type().IsObjectType() {
				m, ok := cv.(map[string]any)
				if !ok {
					t.Errorf("%s%s is an object in the module but not in the chart", path, k)
					continue
				}
				check(path+k+".", sub, m)
			}
		}
	}
	hv := output(t, s, "helm_values")
	check("", hv, chart)
	// The module's default image is the chart's: the one the release publishes.
	img := hv.GetAttr("image").AsValueMap()
	if want := chart["image"].(map[string]any)["repository"]; img["repository"].AsString() != want {
		t.Errorf("module image_repository default %q, chart image.repository %q", img["repository"].AsString(), want)
	}
	if _, ok := img["tag"]; ok {
		t.Error("image_version = null must leave image.tag to the chart (its appVersion)")
	}
	env := output(t, s, "env").AsValueMap()
	if got := env["LABELS"].AsString(); got != "app" {
		t.Errorf("env LABELS = %q", got)
	}
	if !strings.HasPrefix(env["IRSA_PARENT_IAM_ROLE_ARN"].AsString(), "arn:aws:iam::"+pipelineAccount+":role/") {
		t.Errorf("env IRSA_PARENT_IAM_ROLE_ARN = %q", env["IRSA_PARENT_IAM_ROLE_ARN"].AsString())
	}
}

// TestObjectStoreSecret: the exporter module passes an existing Secret
// holding Kubecost's bucket configuration to the chart (default key
// object-store.yaml), and nothing without one.
func TestObjectStoreSecret(t *testing.T) {
	for _, tc := range []struct {
		in        map[string]any
		name, key string
	}{
		{map[string]any{"object_store_secret": map[string]any{"name": "kubecost-federated-store", "key": "federated-store.yaml"}}, "kubecost-federated-store", "federated-store.yaml"},
		{map[string]any{"object_store_secret": map[string]any{"name": "kubecost-etl-backup"}}, "kubecost-etl-backup", "object-store.yaml"},
		{nil, "", ""},
	} {
		s := exporterScope(t, pipelineAccount, "eu-west-1", sampleCluster, "", tc.in)
		exp := output(t, s, "helm_values").GetAttr("exporter").AsValueMap()
		sec, ok := exp["objectStoreExistingSecret"]
		if tc.name == "" {
			if ok {
				t.Errorf("no object_store_secret, but helm_values sets objectStoreExistingSecret %#v", sec)
			}
			continue
		}
		if !ok {
			t.Fatalf("object_store_secret %v not passed to the chart", tc.in)
		}
		m := sec.AsValueMap()
		if m["name"].AsString() != tc.name || m["key"].AsString() != tc.key {
			t.Errorf("objectStoreExistingSecret = %#v, want name %s key %s", sec, tc.name, tc.key)
		}
		if exp["s3BucketName"].AsString() != testBucket {
			t.Errorf("s3BucketName %q: the bucket stays named, IAM is written for it", exp["s3BucketName"].AsString())
		}
	}
}
