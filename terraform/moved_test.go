package terraform_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// movedCases are plans whose resource instances must survive refactors of
// the modules: every resource a plan of the module held at the recorded
// commit is still planned, at the same address or where moved blocks take
// it, so `terraform plan` on an existing state shows no destroy. Each case
// switches on a different set of count-guarded resources.
var movedCases = []struct {
	name, dir string
	in        map[string]any
}{
	{"pipeline-all", "modules/pipeline", map[string]any{
		"bucket_name": testBucket, "create_bucket": true, "bucket_kms_key_arn": "arn:aws:kms:eu-west-1:" + pipelineAccount + ":key/k",
		"exporter_principal_arns":   []string{"arn:aws:iam::" + pipelineAccount + ":role/writer"},
		"create_kubecost_ca_secret": true, "kubecost_ca_certificate_pem": "-----BEGIN CERTIFICATE-----\n",
	}},
	{"pipeline-existing-buckets", "modules/pipeline", map[string]any{
		"bucket_name": testBucket, "attach_bucket_policy": true, "athena_results_bucket_name": "results", "create_crawler": false,
	}},
	{"bill-export", "modules/bill-export", map[string]any{"bucket_name": "example-cur2-scad"}},
	{"bill-export-existing-bucket", "modules/bill-export", map[string]any{
		"bucket_name": "example-cur2-scad", "create_bucket": false, "attach_bucket_policy": true, "create_database": false,
	}},
	{"quicksight-all", "modules/quicksight", quicksightPlanInputs(true)},
	{"quicksight-main", "modules/quicksight", quicksightPlanInputs(false)},
}

func quicksightPlanInputs(bill bool) map[string]any {
	cols := cty.ListVal([]cty.Value{obj("name", "name", "quicksight", "STRING"), obj("name", "totalcost", "quicksight", "DECIMAL")})
	in := map[string]any{
		"principal_arns":        []string{"arn:aws:quicksight:us-east-1:" + pipelineAccount + ":user/default/admin"},
		"athena_workgroup_name": "kubecost-s3-exporter", "database_name": "kubecost_db", "view_name": "kubecost_view",
		"view_columns": cols, "create_analysis": bill,
	}
	if bill {
		in["bill_view"] = cty.ObjectVal(map[string]cty.Value{
			"database_name": cty.StringVal("kubecost_db"), "view_name": cty.StringVal("kubecost_bill_namespace_daily"), "columns": cols,
		})
	}
	return in
}

// TestMovedKeepsState reads testdata/moved/<case>.txt, the instance
// addresses a plan of the case's module held at the commit the file's
// first line names, and follows each through the module's moved blocks
// (at any depth of module calls) to an address the module plans today.
func TestMovedKeepsState(t *testing.T) {
	for _, tc := range movedCases {
		t.Run(tc.name, func(t *testing.T) {
			now, moves := plannedAddresses(t, tc.dir, tc.in)
			b, err := os.ReadFile(filepath.Join("testdata", "moved", tc.name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			var old []string
			for _, l := range strings.Split(string(b), "\n") {
				if l != "" && !strings.HasPrefix(l, "#") {
					old = append(old, l)
				}
			}
			if len(old) < 3 {
				t.Fatalf("%d recorded addresses", len(old))
			}
			for _, a := range old {
				to := follow(a, moves)
				if !slices.Contains(now, to) {
					t.Errorf("%s (now %s) is not planned any more: a plan would destroy it", a, to)
				}
			}
		})
	}
	// Every moved block leads to a resource some case plans, so a misspelt
	// target cannot pass because no recorded address reaches it.
	planned := map[string][]string{}
	for _, tc := range movedCases {
		now, _ := plannedAddresses(t, tc.dir, tc.in)
		planned[tc.dir] = append(planned[tc.dir], now...)
	}
	seen := map[string]bool{}
	for _, tc := range movedCases {
		if seen[tc.dir] {
			continue
		}
		seen[tc.dir] = true
		_, mvs := plannedAddresses(t, tc.dir, tc.in)
		for _, mv := range mvs {
			if !slices.ContainsFunc(planned[tc.dir], func(a string) bool { return a == mv.To || strings.HasPrefix(a, mv.To+"[") }) {
				t.Errorf("%s: moved %s -> %s: no case plans the target", tc.dir, mv.From, mv.To)
			}
		}
	}
}

// TestMovedFollow checks follow on the forms moved blocks take.
func TestMovedFollow(t *testing.T) {
	moves := []tfeval.Move{
		{From: "aws_s3_bucket.data", To: "module.data_bucket.aws_s3_bucket.this"},
		{From: `aws_quicksight_data_set.bill[0]`, To: `aws_quicksight_data_set.this["bill"]`},
		{From: "module.a", To: "module.b"},
		{From: "module.b.aws_x.y", To: "module.b.aws_x.z"},
		{From: "aws_q.this", To: `aws_q.this["kubecost"]`},
	}
	for in, want := range map[string]string{
		"aws_s3_bucket.data[0]":           "module.data_bucket.aws_s3_bucket.this[0]",
		"aws_s3_bucket.data":              "module.data_bucket.aws_s3_bucket.this",
		"aws_s3_bucket.database[0]":       "aws_s3_bucket.database[0]",
		"aws_quicksight_data_set.bill[0]": `aws_quicksight_data_set.this["bill"]`,
		"module.a.aws_x.y":                "module.b.aws_x.z",
		"aws_q.this":                      `aws_q.this["kubecost"]`,
		`aws_q.this["bill"]`:              `aws_q.this["bill"]`,
		"aws_q.this[0]":                   "aws_q.this[0]",
	} {
		if got := follow(in, moves); got != want {
			t.Errorf("follow(%s) = %s, want %s", in, got, want)
		}
	}
}

// follow applies moved blocks to an address until none applies, as
// Terraform chains them, each block once. A move between two resource (or
// module call) addresses carries instance keys and what is inside a call;
// when either side names an instance, both name one instance
// (https://developer.hashicorp.com/terraform/language/modules/develop/refactoring).
func follow(a string, moves []tfeval.Move) string {
	used := make([]bool, len(moves))
	for {
		moved := false
		for i, mv := range moves {
			instance := strings.HasSuffix(mv.From, "]") || strings.HasSuffix(mv.To, "]")
			if used[i] || !(a == mv.From || !instance && (strings.HasPrefix(a, mv.From+"[") || strings.HasPrefix(a, mv.From+"."))) {
				continue
			}
			a, used[i], moved = mv.To+a[len(mv.From):], true, true
			break
		}
		if !moved {
			return a
		}
	}
}

func plannedAddresses(t *testing.T, dir string, in map[string]any) ([]string, []tfeval.Move) {
	t.Helper()
	s, err := load(t, dir).Evaluate(tfeval.Inputs{Vars: vars(t, in)})
	if err != nil {
		t.Fatal(err)
	}
	addrs, moves, err := s.Addresses()
	if err != nil {
		t.Fatal(err)
	}
	return addrs, moves
}
