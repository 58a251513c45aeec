package bill

import (
	"strconv"
	"testing"
)

// TestClusterTagName: the SQL's prefix length is the prefix's, and only a
// key of the prefix and a name names a cluster.
func TestClusterTagName(t *testing.T) {
	if strconv.Itoa(len(ClusterTagPrefix)) != clusterTagPrefixLen {
		t.Errorf("clusterTagPrefixLen %s, prefix %d bytes", clusterTagPrefixLen, len(ClusterTagPrefix))
	}
	for key, want := range map[string]string{
		"user_kubernetes_io_cluster_prod": "prod", "user_kubernetes_io_cluster_": "", "user_kubernetes_io_cluster": "",
		"userXkubernetes_io_cluster_prod": "", "user_eks_cluster_name": "", "": "",
	} {
		if got := string(ClusterTagName([]byte(key))); got != want {
			t.Errorf("%q: %q, want %q", key, got, want)
		}
	}
}
