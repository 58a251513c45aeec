package chart_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestObjectStoreSecretMount: exporter.objectStoreExistingSecret mounts
// the named Secret's key read-only in both pods and points
// OBJECT_STORE_CONFIG_FILE at it; s3BucketName may then be empty. The key
// defaults to object-store.yaml (the ETL backup's Secret); Kubecost 3.x's
// federated storage Secret keeps it under federated-store.yaml.
func TestObjectStoreSecretMount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		file string
	}{
		{"default key", []string{"--set", "exporter.objectStoreExistingSecret.name=kubecost-object-store"}, "object-store.yaml"},
		{"kubecost 3.x federated-store.yaml", []string{"--set", "exporter.objectStoreExistingSecret.name=kubecost-object-store",
			"--set", "exporter.objectStoreExistingSecret.key=federated-store.yaml"}, "federated-store.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--set", "exporter.clusterId=" + clusterARN}, tc.args...)
			specs := render(t, args...).podSpecs(t)
			if len(specs) != 2 {
				t.Fatalf("want the CronJob's and the export Job's pods, got %d", len(specs))
			}
			for kind, spec := range specs {
				c := exporterContainer(t, spec)
				env := envMap(t, c)
				want := "/etc/kubecost-s3-exporter/object-store/" + tc.file
				if env["OBJECT_STORE_CONFIG_FILE"] != want || env["S3_BUCKET_NAME"] != "" {
					t.Errorf("%s: OBJECT_STORE_CONFIG_FILE %q (want %q), S3_BUCKET_NAME %q", kind, env["OBJECT_STORE_CONFIG_FILE"], want, env["S3_BUCKET_NAME"])
				}
				if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
					return m.Name == "object-store" && m.ReadOnly && m.MountPath == "/etc/kubecost-s3-exporter/object-store"
				}) {
					t.Errorf("%s: no read-only object-store mount: %v", kind, c.VolumeMounts)
				}
				i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == "object-store" })
				if i < 0 || spec.Volumes[i].Secret == nil {
					t.Fatalf("%s: no object-store Secret volume: %v", kind, spec.Volumes)
				}
				s := spec.Volumes[i].Secret
				if s.SecretName != "kubecost-object-store" || s.DefaultMode == nil || *s.DefaultMode != 0o440 ||
					len(s.Items) != 1 || s.Items[0].Key != tc.file || s.Items[0].Path != tc.file {
					t.Errorf("%s: Secret volume %+v", kind, s)
				}
				// With the Secret's content where the pod would see it, the
				// exporter accepts the rendered environment.
				env["OBJECT_STORE_CONFIG_FILE"] = writeObjectStore(t)
				if err := exporterAccepts(env); err != nil {
					t.Errorf("%s: the exporter rejects the rendered environment: %v", kind, err)
				}
			}
		})
	}
	// Without the Secret, nothing is mounted and nothing rendered.
	for kind, spec := range render(t, required...).podSpecs(t) {
		if env := envMap(t, exporterContainer(t, spec)); env["OBJECT_STORE_CONFIG_FILE"] != "" {
			t.Errorf("%s renders OBJECT_STORE_CONFIG_FILE by default", kind)
		}
		if slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == "object-store" }) {
			t.Errorf("%s mounts the object-store volume by default", kind)
		}
	}
}

// writeObjectStore writes Kubecost 3.x's federated-store example
// (kubecost/kubecost examples/federatedStorage/aws/federated-store.yaml).
func writeObjectStore(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "federated-store.yaml")
	body := "type: S3\nconfig:\n  bucket: kubecost-multi-cluster-storage\n  endpoint: s3.amazonaws.com\n  region: us-west-2\n  access_key: \"\"\n  secret_key: \"\"\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// withSecretContent points OBJECT_STORE_CONFIG_FILE, where the pod would
// see the mounted Secret's key, at testdata/<key>: what the fixtures'
// Secret holds.
func withSecretContent(env map[string]string) map[string]string {
	if rest, ok := strings.CutPrefix(env["OBJECT_STORE_CONFIG_FILE"], "/etc/kubecost-s3-exporter/object-store/"); ok {
		env["OBJECT_STORE_CONFIG_FILE"] = filepath.Join("testdata", rest)
	}
	return env
}
