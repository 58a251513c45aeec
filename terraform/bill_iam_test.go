package terraform_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// TestBillReaderPolicy checks the bill reader's IAM: it may list and read
// the export's files under their prefix (as a Data Export names them) and
// nothing else of the bucket, decrypt only with the given key, read the
// catalog entries the views resolve, and query only in the workgroup; it
// may never write the CUR bucket.
func TestBillReaderPolicy(t *testing.T) {
	const bucket = "cid-" + pipelineAccount + "-data-exports"
	prefix := "cur2/" + curfixture.Export + "/data/"
	file := "arn:aws:s3:::" + bucket + "/cur2/" + curfixture.Key(curfixture.Export, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	key := "arn:aws:kms:eu-west-1:" + pipelineAccount + ":key/1234abcd-12ab-34cd-56ef-1234567890ab"
	for _, tc := range []struct {
		name string
		in   map[string]any
	}{
		{"minimal", map[string]any{"cur_s3_prefix": prefix}},
		{"kms and athena", map[string]any{"cur_s3_prefix": prefix, "cur_kms_key_arn": key,
			"athena_workgroup_name": "kubecost-s3-exporter", "athena_results_bucket_name": "results"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := billScope(t, tc.in)
			stmts := policyStatements(t, s, "reader")
			if !allowed(stmts, "s3:GetObject", file) {
				t.Errorf("cannot read %s", file)
			}
			if allowed(stmts, "s3:GetObject", "arn:aws:s3:::"+bucket+"/other/secret.csv") {
				t.Error("may read outside the export's prefix")
			}
			var listCond []string
			for _, st := range stmts {
				for _, a := range st.Actions {
					if strings.HasPrefix(a, "s3:") && (strings.HasPrefix(a, "s3:Put") || strings.HasPrefix(a, "s3:Delete")) &&
						slices.ContainsFunc(st.Resources, func(r string) bool { return strings.Contains(r, bucket) }) {
						t.Errorf("%s grants %s on the CUR bucket", st.Sid, a)
					}
					if strings.HasSuffix(a, "*") {
						t.Errorf("%s grants %s", st.Sid, a)
					}
				}
				if slices.Contains(st.Actions, "s3:ListBucket") && slices.Contains(st.Resources, "arn:aws:s3:::"+bucket) {
					for _, c := range st.Conditions {
						listCond = append(listCond, c.Variable+"="+strings.Join(c.Values, ","))
					}
				}
			}
			if !slices.Equal(listCond, []string{"s3:prefix=" + prefix + "*"}) {
				t.Errorf("listing condition %v", listCond)
			}
			for _, r := range []string{"database/cid_data_export", "table/cid_data_export/cur2", "table/kubecost_db/kubecost_bill_namespace_daily", "table/kubecost_db/kubecost_view"} {
				if arn := "arn:aws:glue:eu-west-1:" + pipelineAccount + ":" + r; !allowed(stmts, "glue:GetTable", arn) && !allowed(stmts, "glue:GetDatabase", arn) {
					t.Errorf("cannot read the catalog entry %s", arn)
				}
			}
			_, withKMS := tc.in["cur_kms_key_arn"]
			if allowed(stmts, "kms:Decrypt", key) != withKMS {
				t.Errorf("kms:Decrypt on the key: %v, want %v", !withKMS, withKMS)
			}
			wg := "arn:aws:athena:eu-west-1:" + pipelineAccount + ":workgroup/kubecost-s3-exporter"
			if allowed(stmts, "athena:StartQueryExecution", wg) != withKMS {
				t.Errorf("athena in the workgroup: %v, want %v", !withKMS, withKMS)
			}
		})
	}
}

// TestCURExport checks the Data Export: split cost allocation data on,
// Parquet, overwritten, the columns exporter/bill reads, the bucket policy
// AWS documents, and a Glue table whose projected partitions are the
// export's BILLING_PERIOD folders.
func TestCURExport(t *testing.T) {
	s, err := load(t, "modules/bill-export").Evaluate(tfeval.Inputs{
		Vars: vars(t, map[string]any{"bucket_name": "example-cur2-scad", "export_name": curfixture.Export}),
		Refs: map[string]cty.Value{
			"data.aws_caller_identity.current": obj("account_id", pipelineAccount),
			"data.aws_partition.current":       obj("partition", "aws"),
			"data.aws_region.current":          obj("id", "eu-west-1"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	export := one(t, root(t, s, "resource", "aws_bcmdataexports_export", "this"), "export")
	q := one(t, export, "data_query")
	conf := attr(t, q, "table_configurations").GetAttr("COST_AND_USAGE_REPORT")
	for k, want := range map[string]string{"INCLUDE_SPLIT_COST_ALLOCATION_DATA": "TRUE", "TIME_GRANULARITY": "HOURLY", "INCLUDE_RESOURCES": "TRUE"} {
		if got := conf.GetAttr(k).AsString(); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	stmt := str(t, attr(t, q, "query_statement"))
	for _, c := range []string{"line_item_resource_id", "split_line_item_split_cost", "split_line_item_net_unused_cost", "savings_plan_net_savings_plan_effective_cost"} {
		if !strings.Contains(stmt, c) {
			t.Errorf("the export does not select %s", c)
		}
	}
	out := one(t, one(t, one(t, export, "destination_configurations"), "s3_destination"), "s3_output_configurations")
	for k, want := range map[string]string{"format": "PARQUET", "compression": "PARQUET", "overwrite": "OVERWRITE_REPORT"} {
		if got := str(t, attr(t, out, k)); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	params := attr(t, parquetTable(t, s), "parameters").AsValueMap()
	loc := strings.ReplaceAll(params["storage.location.template"].AsString(), "${billing_period}", "2026-01")
	want := "s3://example-cur2-scad/cur2/" + curfixture.Key(curfixture.Export, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if !strings.HasPrefix(want, loc) || !strings.HasSuffix(loc, "BILLING_PERIOD=2026-01/") {
		t.Errorf("projected location %s does not hold the export's file %s", loc, want)
	}
	stmts := bucketPolicy(t, s, "bucket", "bucket")
	if len(stmts) != 2 || stmts[0].Sid != "DenyInsecureTransport" {
		t.Fatalf("bucket policy %+v", stmts)
	}
	stmts = stmts[1:]
	if !slices.Equal(stmts[0].Principals["Service"], []string{"billingreports.amazonaws.com", "bcm-data-exports.amazonaws.com"}) ||
		!slices.Equal(stmts[0].Actions, []string{"s3:PutObject", "s3:GetBucketPolicy"}) {
		t.Fatalf("bucket policy %+v", stmts)
	}
	var conds []string
	for _, c := range stmts[0].Conditions {
		conds = append(conds, c.Variable+"="+strings.Join(c.Values, ","))
	}
	if !slices.Equal(conds, []string{"aws:SourceAccount=" + pipelineAccount,
		"aws:SourceArn=arn:aws:cur:us-east-1:" + pipelineAccount + ":definition/*,arn:aws:bcm-data-exports:us-east-1:" + pipelineAccount + ":export/*"}) {
		t.Errorf("bucket policy conditions %v", conds)
	}
}
