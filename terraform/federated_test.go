package terraform_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
)

// A federated fleet: four clusters in two accounts and two regions; two
// share one account/region prefix. The exporter runs on the primary.
var fleet = []struct{ id, account, region, name string }{
	{"prod-eu-1", pipelineAccount, "eu-west-1", "prod-eu"},
	{"prod-eu-2", pipelineAccount, "eu-west-1", "prod-eu-2"},
	{"staging", otherAccount, "eu-west-1", "staging-eks"},
	{"data-platform", otherAccount, "us-east-1", "data"},
}

func fleetInput() cty.Value {
	var out []cty.Value
	for _, c := range fleet {
		out = append(out, obj("id", c.id, "arn", clusterARN(c.account, c.region, c.name)))
	}
	return cty.ListVal(out)
}

// TestFederatedWriterPolicy proves key by key that a federated exporter's
// role may write each cluster's own files under that cluster's own
// prefix, list exactly the fleet's account/region prefixes, and nothing else.
func TestFederatedWriterPolicy(t *testing.T) {
	const prefix = "costs/"
	s := exporterScope(t, pipelineAccount, "eu-west-1", "primary", prefix, map[string]any{"federated_clusters": fleetInput()})
	stmts := policyStatements(t, s, "writer")
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	actions := []string{"s3:PutObject", "s3:AbortMultipartUpload", "s3:GetObject", "s3:DeleteObject"}
	for _, c := range fleet {
		own := exporter.Layout{Prefix: prefix, Account: c.account, Region: c.region, Cluster: c.name}
		for _, codec := range exporter.Codecs() {
			for _, a := range actions {
				if !allowed(stmts, a, objectARN(own.Key(day, codec))) {
					t.Errorf("%s: %s not allowed on its own key %s", c.id, a, own.Key(day, codec))
				}
			}
		}
		// Another cluster's name under this cluster's prefix, this cluster's
		// name under another prefix, the Kubecost id as a name, the primary.
		var denied []string
		for _, o := range fleet {
			if o.account != c.account || o.region != c.region {
				denied = append(denied, exporter.Layout{Prefix: prefix, Account: o.account, Region: o.region, Cluster: c.name}.Key(day, exporter.Snappy))
			}
		}
		denied = append(denied,
			exporter.Layout{Prefix: prefix, Account: c.account, Region: c.region, Cluster: c.id}.Key(day, exporter.Snappy),
			exporter.Layout{Prefix: prefix, Account: c.account, Region: c.region, Cluster: c.name + "-x"}.Key(day, exporter.Snappy),
			exporter.Layout{Account: c.account, Region: c.region, Cluster: c.name}.Key(day, exporter.Snappy),
			own.PartitionPrefix()+"evil.parquet",
		)
		for _, key := range denied {
			if key == (exporter.Layout{Prefix: prefix, Account: c.account, Region: c.region, Cluster: c.id}.Key(day, exporter.Snappy)) && c.id == c.name {
				continue
			}
			if slices.ContainsFunc(fleet, func(o struct{ id, account, region, name string }) bool {
				return key == exporter.Layout{Prefix: prefix, Account: o.account, Region: o.region, Cluster: o.name}.Key(day, exporter.Snappy)
			}) {
				continue // another member's own key
			}
			for _, a := range actions {
				if allowed(stmts, a, objectARN(key)) {
					t.Errorf("%s: %s allowed on %s", c.id, a, key)
				}
			}
		}
	}
	primary := exporter.Layout{Prefix: prefix, Account: pipelineAccount, Region: "eu-west-1", Cluster: "primary"}.Key(day, exporter.Snappy)
	if allowed(stmts, "s3:PutObject", objectARN(primary)) {
		t.Errorf("the primary's own key %s is writable, though it is not in federated_clusters", primary)
	}

	// Listing: one prefix per distinct account and region, no more.
	var values []string
	for _, st := range stmts {
		if slices.Contains(st.Actions, "s3:ListBucket") {
			for _, c := range st.Conditions {
				values = append(values, c.Values...)
			}
		}
	}
	want := []string{prefix + "account_id=" + otherAccount + "/region=eu-west-1/*", prefix + "account_id=" + otherAccount + "/region=us-east-1/*",
		prefix + "account_id=" + pipelineAccount + "/region=eu-west-1/*"}
	slices.Sort(values)
	slices.Sort(want)
	if !slices.Equal(values, want) {
		t.Errorf("ListBucket prefixes %v, want %v", values, want)
	}
	if got := strs(t, output(t, s, "partition_prefixes")); len(got) != 3 {
		t.Errorf("partition_prefixes = %v", got)
	}
}

// TestFederatedChartValues: the module hands the chart the map instead of
// clusterId, and names the bucket's owner; the env it renders for users
// without the chart is accepted by the exporter as a federated config.
func TestFederatedChartValues(t *testing.T) {
	s := exporterScope(t, pipelineAccount, "eu-west-1", "primary", "costs/", map[string]any{"federated_clusters": fleetInput()})
	ex := output(t, s, "helm_values").GetAttr("exporter")
	if id := ex.GetAttr("clusterId").AsString(); id != "" {
		t.Errorf("exporter.clusterId = %q with federated clusters", id)
	}
	arns := ex.GetAttr("clusterArns").AsValueMap()
	for _, c := range fleet {
		if v, ok := arns[c.id]; !ok || v.AsString() != clusterARN(c.account, c.region, c.name) {
			t.Errorf("exporter.clusterArns[%s] = %v", c.id, v)
		}
	}
	if o := ex.GetAttr("expectedBucketOwner").AsString(); o != pipelineAccount {
		t.Errorf("exporter.expectedBucketOwner = %q, want the pipeline account", o)
	}
	env := map[string]string{}
	for k, v := range output(t, s, "env").AsValueMap() {
		if v.AsString() != "" {
			env[k] = v.AsString()
		}
	}
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("the exporter rejects the module's env: %v", err)
	}
	var ids []string
	for _, m := range cfg.Members() {
		ids = append(ids, m.ID)
	}
	if !cfg.Federated() || len(ids) != len(fleet) || !strings.Contains(strings.Join(ids, ","), "data-platform") {
		t.Errorf("federated %v, members %v", cfg.Federated(), ids)
	}
}
