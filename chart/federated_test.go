package chart_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestClusterMapConfigMap renders the federated map from an existing
// ConfigMap: the ConfigMap's key is mounted read-only where
// CLUSTER_MAP_FILE points, and the exporter accepts the environment once
// that file holds a map.
func TestClusterMapConfigMap(t *testing.T) {
	t.Parallel()
	helm(t)
	r := render(t, "--set", "exporter.s3BucketName=cca-data", "--set", "exporter.clusterMapConfigMap.name=fleet-map",
		"--set", "exporter.clusterMapConfigMap.key=map.json", "--set-string", "exporter.expectedBucketOwner=111122223333")
	for kind, spec := range r.podSpecs(t) {
		c := exporterContainer(t, spec)
		env := envMap(t, c)
		const file = "/etc/kubecost-s3-exporter/cluster-map/map.json"
		if env["CLUSTER_MAP_FILE"] != file || env["CLUSTER_ID"] != "" || env["CLUSTER_ARNS"] != "" {
			t.Errorf("%s: env %v", kind, env)
		}
		mounted := false
		for _, m := range c.VolumeMounts {
			if m.Name == "cluster-map" && m.MountPath == filepath.Dir(file) && m.ReadOnly {
				mounted = true
			}
		}
		found := false
		for _, v := range spec.Volumes {
			if v.Name == "cluster-map" && v.ConfigMap != nil && v.ConfigMap.Name == "fleet-map" &&
				len(v.ConfigMap.Items) == 1 && v.ConfigMap.Items[0].Key == "map.json" && v.ConfigMap.Items[0].Path == "map.json" {
				found = true
			}
		}
		if !mounted || !found {
			t.Errorf("%s: the ConfigMap is not mounted at %s (mount %v, volume %v)", kind, filepath.Dir(file), mounted, found)
		}
		// The exporter reads what the ConfigMap would hold.
		local := filepath.Join(t.TempDir(), "map.json")
		if err := os.WriteFile(local, []byte(`{"prod-eu-1": "arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		env["CLUSTER_MAP_FILE"] = local
		if err := exporterAccepts(env); err != nil {
			t.Errorf("%s: the exporter rejects the rendered environment: %v", kind, err)
		}
	}
}
