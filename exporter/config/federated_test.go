package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// federatedWith is what the single-variable cases of a federated variable
// need beside it: CLUSTER_ID unset, since the two modes exclude each other.
var federatedWith = map[string]map[string]string{
	"CLUSTER_ARNS":     {"CLUSTER_ID": unset},
	"CLUSTER_MAP_FILE": {"CLUSTER_ID": unset, "S3_EXPECTED_BUCKET_OWNER": "disabled"},
}

// writeMapFiles writes valid CLUSTER_MAP_FILE files, YAML and JSON.
func writeMapFiles(t *testing.T) []string {
	dir := t.TempDir()
	files := map[string]string{
		"clusters.yaml": "prod-eu-1: arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu\n" +
			"\"staging\": \"arn:aws:eks:us-east-1:444455556666:cluster/staging\"\n",
		"clusters.json": `{"prod-eu-1": "arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu"}`,
	}
	var out []string
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func TestFederatedMembers(t *testing.T) {
	t.Parallel()
	files := writeMapFiles(t)
	for _, env := range []map[string]string{
		{"CLUSTER_ARNS": "staging = arn:aws:eks:us-east-1:444455556666:cluster/staging, prod-eu-1=arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu"},
		{"CLUSTER_MAP_FILE": files[1]}, // clusters.yaml
	} {
		env["CLUSTER_ID"] = unset
		env["S3_EXPECTED_BUCKET_OWNER"] = "999988887777"
		c, err := loadWith(env)
		if err != nil {
			t.Fatalf("%v: %v", env, err)
		}
		got := c.Members()
		want := []Member{
			{ID: "prod-eu-1", Cluster: Cluster{ARN: "arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu", Partition: "aws", Region: "eu-west-1", Account: "111122223333", Name: "prod-eu"}},
			{ID: "staging", Cluster: Cluster{ARN: "arn:aws:eks:us-east-1:444455556666:cluster/staging", Partition: "aws", Region: "us-east-1", Account: "444455556666", Name: "staging"}},
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: Members() = %+v, want %+v", env, got, want)
		}
		if !c.Federated() || c.Home() != want[0].Cluster || c.BucketOwner() != "999988887777" {
			t.Errorf("Federated %v Home %+v BucketOwner %s", c.Federated(), c.Home(), c.BucketOwner())
		}
	}
}

// Combinations of the cluster variables that must fail, each with one
// error naming the variable.
func TestFederatedInvalidCombinations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	arns := "a=arn:aws:eks:eu-west-1:111122223333:cluster/a"
	twoAccounts := arns + ",b=arn:aws:eks:eu-west-1:444455556666:cluster/b"
	cases := []struct {
		env        map[string]string
		field, msg string
	}{
		{map[string]string{"CLUSTER_ARNS": arns}, "CLUSTER_ID", "not both"},
		{map[string]string{"CLUSTER_ID": unset}, "CLUSTER_ID", "or, for a federated Kubecost, CLUSTER_ARNS or CLUSTER_MAP_FILE"},
		{map[string]string{"CLUSTER_ID": unset, "CLUSTER_ARNS": arns, "CLUSTER_MAP_FILE": write("ok.yaml", "x: "+strings.TrimPrefix(arns, "a="))},
			"CLUSTER_ARNS", "set CLUSTER_ARNS or CLUSTER_MAP_FILE, not both"},
		{map[string]string{"CLUSTER_ID": unset, "CLUSTER_MAP_FILE": write("dup.yaml", "a: arn:aws:eks:eu-west-1:111122223333:cluster/a\na: arn:aws:eks:eu-west-1:111122223333:cluster/b\n")},
			"CLUSTER_MAP_FILE", "want a YAML or JSON object"},
		{map[string]string{"CLUSTER_ID": unset, "CLUSTER_MAP_FILE": write("list.yaml", "- a\n- b\n")},
			"CLUSTER_MAP_FILE", "want a YAML or JSON object"},
		{map[string]string{"CLUSTER_ID": unset, "CLUSTER_MAP_FILE": write("empty.yaml", "{}")}, "CLUSTER_MAP_FILE", "no cluster"},
		{map[string]string{"CLUSTER_ID": unset, "CLUSTER_MAP_FILE": write("badarn.json", `{"a": "arn:aws:eks:eu-west-1:1:cluster/a"}`)},
			"CLUSTER_MAP_FILE", `cluster "a": "arn:aws:eks:eu-west-1:1:cluster/a" is not an EKS cluster ARN`},
		{map[string]string{"CLUSTER_ID": unset, "CLUSTER_ARNS": twoAccounts}, "S3_EXPECTED_BUCKET_OWNER", "clusters are in several accounts (111122223333, 444455556666)"},
		{map[string]string{"KUBECOST_API_FLAVOR": "opencost", "KUBECOST_API_ENDPOINT": "http://opencost.opencost:9003", "KUBECOST_CLUSTER_FILTER": "v1"}, "KUBECOST_CLUSTER_FILTER", "OpenCost does not read filterClusters"},
		{map[string]string{"CLUSTER_ID": unset, "CLUSTER_ARNS": arns, "IRSA_PARENT_IAM_ROLE_ARN": "arn:aws-cn:iam::222233334444:role/w"},
			"IRSA_PARENT_IAM_ROLE_ARN", "roles cannot be assumed across partitions"},
	}
	for _, tc := range cases {
		_, err := loadWith(tc.env)
		var errs exporter.FieldErrors
		switch {
		case !errors.As(err, &errs) || len(errs) != 1:
			t.Errorf("%v: err = %v, want one config error", tc.env, err)
		case errs[0].Field != tc.field || !strings.Contains(err.Error(), tc.msg) || strings.ContainsAny(err.Error(), "\r\n"):
			t.Errorf("%v: %q, want one line naming %s and saying %q", tc.env, err, tc.field, tc.msg)
		}
	}
	// Accepted: several accounts with an owner, or a parent role, or no S3.
	for _, env := range []map[string]string{
		{"CLUSTER_ID": unset, "CLUSTER_ARNS": twoAccounts, "S3_EXPECTED_BUCKET_OWNER": "disabled"},
		{"CLUSTER_ID": unset, "CLUSTER_ARNS": twoAccounts, "IRSA_PARENT_IAM_ROLE_ARN": "arn:aws:iam::222233334444:role/w"},
		{"CLUSTER_ID": unset, "CLUSTER_ARNS": twoAccounts, "S3_BUCKET_NAME": unset, "OUTPUT_DIR": "/tmp/out"},
	} {
		if _, err := loadWith(env); err != nil {
			t.Errorf("%v rejected: %v", env, err)
		}
	}
}
