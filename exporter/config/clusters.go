package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
)

// Federated Kubecost: one primary serves many clusters, each named by a free-form cluster id
// (properties.cluster). Each id's EKS ARN, from CLUSTER_ARNS or CLUSTER_MAP_FILE (a
// ConfigMap), gives that cluster's keys and eksClusterName/clusterid columns.

// Member is one cluster of a federated Kubecost: its Kubecost cluster id and its ARN's parts.
type Member struct {
	ID string // Kubecost's cluster id, as properties.cluster reports it
	Cluster
}

// Layout is where the member's files live in the archive.
func (c *Config) Layout(m Member) exporter.Layout {
	return exporter.Layout{Prefix: c.S3Prefix, Account: m.Account, Region: m.Region, Cluster: m.Name}
}

// maxMapFile bounds CLUSTER_MAP_FILE: thousands of clusters are a few hundred KiB.
const maxMapFile = 4 << 20

// Federated reports whether the config names a map of clusters instead of CLUSTER_ID.
func (c *Config) Federated() bool { return c.ClusterARNs != "" || c.ClusterMapFile != "" }

// Members returns the mapped clusters sorted by id, or CLUSTER_ID's alone without an id (a
// fleet of one). Call it only on a validated Config.
func (c *Config) Members() []Member {
	if !c.Federated() {
		return []Member{{Cluster: c.Cluster()}}
	}
	entries, _ := c.mapEntries()
	out := make([]Member, 0, len(entries))
	for _, e := range entries {
		out = append(out, Member{ID: e[0], Cluster: parseCluster(e[1])})
	}
	slices.SortFunc(out, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Home is the cluster whose region and name the run's AWS clients and
// session default to: CLUSTER_ID's, or the first member's by id.
func (c *Config) Home() Cluster {
	if m := c.Members(); c.Federated() && len(m) > 0 {
		return m[0].Cluster
	}
	return c.Cluster()
}

// mapEntries returns the unvalidated (id, ARN) pairs of CLUSTER_ARNS (as written) or of the
// map file (by id).
func (c *Config) mapEntries() ([][2]string, error) {
	if c.ClusterARNs != "" {
		return parseInlineMap(c.ClusterARNs)
	}
	if c.ClusterMapFile == "" {
		return nil, nil
	}
	if c.mapFileErr != nil {
		return nil, fmt.Errorf("cannot read the file: %v", c.mapFileErr)
	}
	return parseMapFile(c.mapFile)
}

// parseInlineMap reads CLUSTER_ARNS (its one grammar, which NamedClusters reads too).
func parseInlineMap(s string) ([][2]string, error) {
	var out [][2]string
	for _, item := range SplitList(s) {
		id, arn, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not <Kubecost cluster id>=<EKS cluster ARN>", item)
		}
		out = append(out, [2]string{strings.TrimSpace(id), strings.TrimSpace(arn)})
	}
	return out, nil
}

// NamedClusters names the clusters the environment names even when the configuration is
// invalid, so that its error is still reported per cluster: CLUSTER_ID's and CLUSTER_ARNS'
// with a valid ARN, each once; [""] when none (a bad ARN, or a map file, not read for this).
func NamedClusters(lookup func(string) (string, bool)) []string {
	var arns []string
	if v, ok := lookup("CLUSTER_ID"); ok {
		arns = append(arns, strings.TrimSpace(v))
	}
	if v, ok := lookup("CLUSTER_ARNS"); ok {
		for _, item := range SplitList(v) {
			// Item by item: one bad pair must not hide the others.
			if pairs, err := parseInlineMap(item); err == nil {
				arns = append(arns, pairs[0][1])
			}
		}
	}
	var names []string
	for _, arn := range arns {
		if c, ok := exporter.ParseClusterARN(arn); ok && !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	if len(names) == 0 {
		return []string{""}
	}
	return names
}

// parseMapFile reads a YAML or JSON object of id: ARN. Strict parsing
// makes a repeated id an error instead of a silent last-one-wins.
func parseMapFile(b []byte) ([][2]string, error) {
	var m map[string]string
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		// The parser's message may span lines; a config error is one line.
		msg := strings.Join(strings.Fields(err.Error()), " ")
		return nil, fmt.Errorf("want a YAML or JSON object of <Kubecost cluster id>: <EKS cluster ARN>: %s", msg)
	}
	out := make([][2]string, 0, len(m))
	for id, arn := range m {
		out = append(out, [2]string{strings.TrimSpace(id), strings.TrimSpace(arn)})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return cmp.Compare(a[0], b[0]) })
	return out, nil
}

// checkMap validates the map in v: every id usable in a query, every ARN an EKS cluster ARN,
// no id or ARN twice, and one partition, since one set of credentials writes them all.
func checkMap(c *Config, v string, bad badFunc) {
	entries, err := c.mapEntries()
	if err != nil {
		bad(v, "%v", err)
		return
	}
	if len(entries) == 0 {
		bad(v, "no cluster: want at least one <Kubecost cluster id>=<EKS cluster ARN>")
		return
	}
	if err := checkEntries(entries); err != nil {
		bad(v, "%v", err)
	}
}

func checkEntries(entries [][2]string) error {
	ids, arns := map[string]bool{}, map[string]string{}
	partition := ""
	for _, e := range entries {
		id, arn := e[0], e[1]
		if p := kubecost.ClusterIDProblem(id); p != "" {
			return errors.New(p)
		}
		m, ok := exporter.ParseClusterARN(arn)
		if !ok {
			return fmt.Errorf("cluster %q: %q is not %s", id, arn, exporter.ClusterARNAccepted)
		}
		if ids[id] {
			return fmt.Errorf("cluster id %q is listed twice", id)
		}
		if other, ok := arns[arn]; ok {
			return fmt.Errorf("clusters %q and %q have the same ARN %s: their files would overwrite each other", other, id, arn)
		}
		if partition != "" && m.Partition != partition {
			return fmt.Errorf("cluster %q is in partition %s, the others in %s: one exporter writes one partition", id, m.Partition, partition)
		}
		ids[id], arns[arn], partition = true, id, m.Partition
	}
	return nil
}

func checkClusterARNs(c *Config, bad badFunc) {
	switch {
	case c.ClusterARNs == "":
	case c.ClusterMapFile != "":
		bad(c.ClusterARNs, "set CLUSTER_ARNS or CLUSTER_MAP_FILE, not both")
	default:
		checkMap(c, c.ClusterARNs, bad)
	}
}

func checkClusterMapFile(c *Config, bad badFunc) {
	if c.ClusterMapFile != "" && c.ClusterARNs == "" {
		checkMap(c, c.ClusterMapFile, bad)
	}
}

// accounts lists the distinct accounts of the clusters.
func (c *Config) accounts() []string {
	var out []string
	for _, m := range c.Members() {
		if m.Account != "" && !slices.Contains(out, m.Account) {
			out = append(out, m.Account)
		}
	}
	return out
}
