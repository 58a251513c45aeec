package terraform_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// iamMatch reports whether s matches an IAM resource or condition pattern:
// `*` matches any run of characters (slashes included), `?` exactly one
// character, everything else itself, case-sensitively.
func iamMatch(pattern, s string) bool {
	n := []rune(s)
	// match[j] = pattern[:i] matches s[:j]; iterate over the pattern.
	match := make([]bool, len(n)+1)
	match[0] = true
	for _, pc := range pattern {
		next := make([]bool, len(n)+1)
		switch pc {
		case '*':
			seen := false
			for j := 0; j <= len(n); j++ {
				seen = seen || match[j]
				next[j] = seen
			}
		default:
			for j := 1; j <= len(n); j++ {
				next[j] = match[j-1] && (pc == '?' || pc == n[j-1])
			}
		}
		match = next
	}
	return match[len(n)]
}

func TestIAMMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"a*c", "abc", true},
		{"a*c", "ac", true},
		{"a*c", "a/b/c", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"a?c", "abbc", false},
		{"*_prod.*.parquet", "2026-01-01_eu_prod.snappy.parquet", true}, // why the module does not use it
		{"????-??-??_prod.snappy.parquet", "2026-01-01_eu_prod.snappy.parquet", false},
		{"????-??-??_prod.snappy.parquet", "2026-01-01_prod.snappy.parquet", true},
		{"abc", "ABC", false},
	} {
		if got := iamMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("iamMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

const sampleCluster = "prod"

func clusterARN(account, region, name string) string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", region, account, name)
}

// exporterScope evaluates the exporter module for a cluster in account
// clusterAccount, with the bucket in pipelineAccount.
func exporterScope(t *testing.T, clusterAccount, region, name, prefix string, extra map[string]any) *tfeval.Scope {
	t.Helper()
	in := map[string]any{
		"cluster_arn":       clusterARN(clusterAccount, region, name),
		"oidc_provider_arn": fmt.Sprintf("arn:aws:iam::%s:oidc-provider/oidc.eks.%s.amazonaws.com/id/0123456789ABCDEF", clusterAccount, region),
		"bucket_name":       testBucket,
		"s3_prefix":         prefix,
	}
	for k, v := range extra {
		in[k] = v
	}
	irsa := fmt.Sprintf("arn:aws:iam::%s:role/kubecost-s3-exporter-%s", clusterAccount, name)
	parent := fmt.Sprintf("arn:aws:iam::%s:role/kubecost-s3-exporter-%s", pipelineAccount, name)
	s, err := load(t, "modules/exporter").Evaluate(tfeval.Inputs{
		Vars: vars(t, in),
		Refs: map[string]cty.Value{
			"data.aws_caller_identity.cluster":  obj("account_id", clusterAccount),
			"data.aws_caller_identity.pipeline": obj("account_id", pipelineAccount),
			"aws_iam_role.irsa":                 obj("arn", irsa, "id", "irsa", "name", "irsa"),
			"aws_iam_role.parent":               cty.TupleVal([]cty.Value{obj("arn", parent, "id", "parent", "name", "parent")}),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type statement struct {
	Sid, Effect        string
	Actions, Resources []string
	Principals         map[string][]string
	Conditions         []condition
}

type condition struct {
	Test, Variable string
	Values         []string
}

// policyStatements evaluates the statements of an aws_iam_policy_document.
func policyStatements(t *testing.T, s *tfeval.Scope, name string) []statement {
	t.Helper()
	doc := root(t, s, "data", "aws_iam_policy_document", name)
	var out []statement
	for _, st := range blocks(t, doc, "statement") {
		x := statement{Effect: "Allow", Principals: map[string][]string{}}
		if v := attr(t, st, "sid"); !v.IsNull() {
			x.Sid = str(t, v)
		}
		if v := attr(t, st, "effect"); !v.IsNull() {
			x.Effect = str(t, v)
		}
		x.Actions = strs(t, attr(t, st, "actions"))
		x.Resources = strs(t, attr(t, st, "resources"))
		for _, p := range blocks(t, st, "principals") {
			typ := str(t, attr(t, p, "type"))
			x.Principals[typ] = append(x.Principals[typ], strs(t, attr(t, p, "identifiers"))...)
		}
		for _, c := range blocks(t, st, "condition") {
			x.Conditions = append(x.Conditions, condition{str(t, attr(t, c, "test")), str(t, attr(t, c, "variable")), strs(t, attr(t, c, "values"))})
		}
		out = append(out, x)
	}
	return out
}

// bucketPolicy is the policy a call of modules/internal/bucket attaches:
// the bucket module's own statement (TLS only), then those of the caller's
// document doc, which the call must pass as its policy_documents.
func bucketPolicy(t *testing.T, s *tfeval.Scope, call, doc string) []statement {
	t.Helper()
	b := s.M.Find("module", call)
	if b == nil {
		t.Fatalf("no module %s in %s", call, s.M.Dir)
	}
	a, ok := b.Body.Attributes["policy_documents"]
	if !ok {
		t.Fatalf("module %s has no policy_documents", call)
	}
	if src := strings.Join(strings.Fields(s.M.Source(a.Expr.Range())), ""); src != "[data.aws_iam_policy_document."+doc+".json]" {
		t.Fatalf("module %s policy_documents = %s, want [data.aws_iam_policy_document.%s.json]", call, src, doc)
	}
	child, err := s.Call(call, map[string]cty.Value{"data.aws_partition.current": obj("partition", "aws")})
	if err != nil {
		t.Fatal(err)
	}
	return append(policyStatements(t, child, "this"), policyStatements(t, s, doc)...)
}

func allowed(stmts []statement, action, resource string) bool {
	for _, s := range stmts {
		if s.Effect != "Allow" || !slices.Contains(s.Actions, action) {
			continue
		}
		for _, r := range s.Resources {
			if iamMatch(r, resource) {
				return true
			}
		}
	}
	return false
}

func objectARN(key string) string { return "arn:aws:s3:::" + testBucket + "/" + key }

// TestWriterPolicyMatchesKeyLayout evaluates the exporter module's S3
// policy for a sample cluster and checks it against exporter.Layout: every
// file the cluster writes (any codec, any day) may be put, and no file of
// another cluster, account, region or prefix may.
func TestWriterPolicyMatchesKeyLayout(t *testing.T) {
	days := []time.Time{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		name, account, prefix string
	}{
		{"same account, no prefix", pipelineAccount, ""},
		{"same account, prefix", pipelineAccount, "team-a/costs/"},
		{"cross account", otherAccount, "costs/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := exporterScope(t, tc.account, "eu-west-1", sampleCluster, tc.prefix, nil)
			stmts := policyStatements(t, s, "writer")
			own := exporter.Layout{Prefix: tc.prefix, Account: tc.account, Region: "eu-west-1", Cluster: sampleCluster}
			for _, day := range days {
				for _, codec := range exporter.Codecs() {
					key := own.Key(day, codec)
					if !allowed(stmts, "s3:PutObject", objectARN(key)) {
						t.Errorf("own key %s may not be put", key)
					}
					if !allowed(stmts, "s3:AbortMultipartUpload", objectARN(key)) {
						t.Errorf("own key %s may not abort its multipart upload", key)
					}
					// Re-exports: HeadObject (s3:GetObject) and the delete of a replaced file.
					for _, a := range []string{"s3:GetObject", "s3:DeleteObject"} {
						if !allowed(stmts, a, objectARN(key)) {
							t.Errorf("own key %s: %s not allowed", key, a)
						}
					}
				}
			}

			if !allowed(stmts, "s3:ListBucketMultipartUploads", "arn:aws:s3:::"+testBucket) {
				t.Error("the writer may not list unfinished uploads, so runs cannot clean up after killed ones")
			}

			var others []string
			for _, name := range []string{"prod-eu", "eu_prod", "xprod", "prod_", "pro", "prod-prod", "PROD"} {
				others = append(others, exporter.Layout{Prefix: tc.prefix, Account: tc.account, Region: "eu-west-1", Cluster: name}.Key(days[0], exporter.Snappy))
			}
			others = append(others,
				exporter.Layout{Prefix: tc.prefix, Account: "999988887777", Region: "eu-west-1", Cluster: sampleCluster}.Key(days[0], exporter.Snappy),
				exporter.Layout{Prefix: tc.prefix, Account: tc.account, Region: "us-east-1", Cluster: sampleCluster}.Key(days[0], exporter.Snappy),
				exporter.Layout{Prefix: "other/", Account: tc.account, Region: "eu-west-1", Cluster: sampleCluster}.Key(days[0], exporter.Snappy),
				own.PartitionPrefix()+"year=2026/month=01/x/2026-01-01_prod.snappy.parquet",
				own.PartitionPrefix()+"year=2026/month=01/2026-01-01_prod.snappy.parquet.tmp",
				own.PartitionPrefix()+"year=2026/month=01/2026-01-01_prod.lz4.parquet",
				own.PartitionPrefix()+"year=2026/month=01/2026-01-01_prod-eu.snappy.parquet/2026-01-01_prod.snappy.parquet",
				own.PartitionPrefix()+"evil.parquet",
			)
			if tc.prefix != "" {
				others = append(others, exporter.Layout{Account: tc.account, Region: "eu-west-1", Cluster: sampleCluster}.Key(days[0], exporter.Snappy))
			}
			for _, key := range others {
				for _, a := range []string{"s3:PutObject", "s3:AbortMultipartUpload", "s3:GetObject", "s3:DeleteObject"} {
					if allowed(stmts, a, objectARN(key)) {
						t.Errorf("%s allowed on %s, a key of another cluster or layout", a, key)
					}
				}
			}

			// Listing: the exporter lists its account/region prefix only.
			var list *statement
			for i, st := range stmts {
				if slices.Contains(st.Actions, "s3:ListBucket") {
					list = &stmts[i]
				}
			}
			if list == nil {
				t.Fatal("no s3:ListBucket statement")
			}
			if !slices.Equal(list.Resources, []string{"arn:aws:s3:::" + testBucket}) {
				t.Errorf("ListBucket resources = %v", list.Resources)
			}
			prefixOK := func(p string) bool {
				for _, c := range list.Conditions {
					if c.Test == "StringLike" && c.Variable == "s3:prefix" {
						for _, v := range c.Values {
							if iamMatch(v, p) {
								return true
							}
						}
					}
				}
				return false
			}
			if !prefixOK(own.PartitionPrefix()) || !prefixOK(own.MonthPrefix(days[0])) {
				t.Errorf("cannot list own prefix %s", own.PartitionPrefix())
			}
			for _, p := range []string{
				exporter.Layout{Prefix: tc.prefix, Account: "999988887777", Region: "eu-west-1"}.PartitionPrefix(),
				exporter.Layout{Prefix: tc.prefix, Account: tc.account, Region: "us-east-1"}.PartitionPrefix(),
				"", tc.prefix,
			} {
				if prefixOK(p) {
					t.Errorf("may list %q", p)
				}
			}
			for _, st := range stmts {
				for _, a := range st.Actions {
					if strings.Contains(a, "*") || !slices.Contains([]string{"s3:ListBucket", "s3:ListBucketMultipartUploads", "s3:PutObject", "s3:AbortMultipartUpload",
						"s3:GetObject", "s3:DeleteObject", "kms:GenerateDataKey", "kms:Decrypt", "secretsmanager:GetSecretValue"}, a) {
						t.Errorf("writer policy grants %s", a)
					}
				}
			}
		})
	}
}

// TestRoleChaining checks which roles exist, who trusts whom and what the
// chart is told, in one account and across accounts.
func TestRoleChaining(t *testing.T) {
	for _, cross := range []bool{false, true} {
		t.Run(fmt.Sprint("cross=", cross), func(t *testing.T) {
			account := pipelineAccount
			if cross {
				account = otherAccount
			}
			s := exporterScope(t, account, "eu-west-1", sampleCluster, "", map[string]any{"service_account_namespace": "cost", "service_account_name": "exporter"})
			want := map[string]int{"parent": 0, "parent_writer": 0, "assume_parent": 0, "writer": 1}
			if cross {
				want = map[string]int{"parent": 1, "parent_writer": 1, "assume_parent": 1, "writer": 0}
			}
			if n := count(t, s, "resource", "aws_iam_role", "parent"); n != want["parent"] {
				t.Errorf("parent roles = %d, want %d", n, want["parent"])
			}
			for _, p := range []string{"writer", "parent_writer", "assume_parent"} {
				if n := count(t, s, "resource", "aws_iam_role_policy", p); n != want[p] {
					t.Errorf("aws_iam_role_policy.%s count = %d, want %d", p, n, want[p])
				}
			}

			trust := policyStatements(t, s, "irsa_trust")
			if len(trust) != 1 || !slices.Equal(trust[0].Actions, []string{"sts:AssumeRoleWithWebIdentity"}) {
				t.Fatalf("IRSA trust = %+v", trust)
			}
			issuer := "oidc.eks.eu-west-1.amazonaws.com/id/0123456789ABCDEF"
			conds := map[string][]string{}
			for _, c := range trust[0].Conditions {
				if c.Test != "StringEquals" {
					t.Errorf("IRSA trust condition %s is not StringEquals", c.Variable)
				}
				conds[c.Variable] = c.Values
			}
			if g := conds[issuer+":sub"]; !slices.Equal(g, []string{"system:serviceaccount:cost:exporter"}) {
				t.Errorf("IRSA trust sub = %v", g)
			}
			if g := conds[issuer+":aud"]; !slices.Equal(g, []string{"sts.amazonaws.com"}) {
				t.Errorf("IRSA trust aud = %v", g)
			}

			irsa := "arn:aws:iam::" + account + ":role/kubecost-s3-exporter-prod"
			parent := "arn:aws:iam::" + pipelineAccount + ":role/kubecost-s3-exporter-prod"
			helm := output(t, s, "helm_values")
			gotParent := helm.GetAttr("exporter").GetAttr("irsaParentRoleArn").AsString()
			if gotRole := helm.GetAttr("serviceAccount").GetAttr("roleArn").AsString(); gotRole != irsa {
				t.Errorf("serviceAccount.roleArn = %s", gotRole)
			}
			writer := str(t, output(t, s, "writer_role_arn"))
			if cross {
				pt := policyStatements(t, s, "parent_trust")
				if len(pt) != 1 || !slices.Equal(pt[0].Principals["AWS"], []string{irsa}) || !slices.Equal(pt[0].Actions, []string{"sts:AssumeRole"}) {
					t.Errorf("parent trust = %+v", pt)
				}
				ap := policyStatements(t, s, "assume_parent")
				if len(ap) != 1 || !slices.Equal(ap[0].Resources, []string{parent}) {
					t.Errorf("child may assume %+v", ap)
				}
				if gotParent != parent || writer != parent {
					t.Errorf("irsaParentRoleArn = %q, writer = %q, want %q", gotParent, writer, parent)
				}
			} else if gotParent != "" || writer != irsa {
				t.Errorf("irsaParentRoleArn = %q, writer = %q in one account", gotParent, writer)
			}

			values, err := json.Marshal(map[string]any{"clusterId": helm.GetAttr("exporter").GetAttr("clusterId").AsString()})
			if err != nil || !strings.Contains(string(values), clusterARN(account, "eu-west-1", sampleCluster)) {
				t.Errorf("exporter.clusterId = %s", values)
			}
		})
	}
}

// TestBucketPolicy checks the pipeline's sample bucket policy: TLS only,
// writes under the data prefix only by the exporters' roles.
func TestBucketPolicy(t *testing.T) {
	writers := []string{
		"arn:aws:iam::" + pipelineAccount + ":role/kubecost-s3-exporter-prod",
		"arn:aws:iam::" + pipelineAccount + ":role/kubecost-s3-exporter-staging",
	}
	s := pipelineScope(t, map[string]any{"exporter_principal_arns": writers, "s3_prefix": "costs/"})
	stmts := bucketPolicy(t, s, "data_bucket", "bucket")
	bySid := map[string]statement{}
	for _, st := range stmts {
		bySid[st.Sid] = st
	}
	tls, ok := bySid["DenyInsecureTransport"]
	if !ok || tls.Effect != "Deny" || !slices.Equal(tls.Actions, []string{"s3:*"}) ||
		len(tls.Conditions) != 1 || tls.Conditions[0].Variable != "aws:SecureTransport" || !slices.Equal(tls.Conditions[0].Values, []string{"false"}) {
		t.Errorf("TLS statement = %+v", tls)
	}
	deny, ok := bySid["DenyWritesByOtherPrincipals"]
	if !ok || deny.Effect != "Deny" || !slices.Contains(deny.Actions, "s3:PutObject") ||
		len(deny.Conditions) != 1 || deny.Conditions[0].Test != "ArnNotLike" || deny.Conditions[0].Variable != "aws:PrincipalArn" ||
		!slices.Equal(deny.Conditions[0].Values, writers) {
		t.Errorf("deny statement = %+v", deny)
	}
	allow := bySid["AllowExportersToWriteDailyFiles"]
	if !slices.Equal(allow.Principals["AWS"], writers) {
		t.Errorf("allow principals = %v", allow.Principals)
	}
	for _, l := range []exporter.Layout{
		{Prefix: "costs/", Account: pipelineAccount, Region: "eu-west-1", Cluster: "prod"},
		{Prefix: "costs/", Account: otherAccount, Region: "us-east-1", Cluster: "eu_prod"},
	} {
		key := objectARN(l.Key(time.Date(2026, 2, 3, 0, 0, 0, 0, time.UTC), exporter.Zstd))
		for _, st := range []statement{deny, allow} {
			if !iamMatch(st.Resources[0], key) {
				t.Errorf("%s does not cover %s", st.Sid, key)
			}
		}
	}
	if iamMatch(deny.Resources[0], objectARN("elsewhere/file")) {
		t.Errorf("the write restriction covers keys outside the data prefix")
	}

	none := bucketPolicy(t, pipelineScope(t, nil), "data_bucket", "bucket")
	if len(none) != 1 || none[0].Sid != "DenyInsecureTransport" {
		t.Errorf("without exporters the policy should only deny insecure transport: %+v", none)
	}
}

// TestCrawlerPolicy checks that the crawler may read every exporter file
// under the data prefix and add partitions, and nothing else.
func TestCrawlerPolicy(t *testing.T) {
	for _, prefix := range []string{"", "costs/"} {
		s := pipelineScope(t, map[string]any{"s3_prefix": prefix})
		stmts := policyStatements(t, s, "crawler")
		for _, l := range []exporter.Layout{
			{Prefix: prefix, Account: pipelineAccount, Region: "eu-west-1", Cluster: "prod"},
			{Prefix: prefix, Account: otherAccount, Region: "us-east-1", Cluster: "eu_prod"},
		} {
			key := objectARN(l.Key(time.Date(2026, 2, 3, 0, 0, 0, 0, time.UTC), exporter.Gzip))
			if !allowed(stmts, "s3:GetObject", key) {
				t.Errorf("prefix %q: the crawler cannot read %s", prefix, key)
			}
		}
		if allowed(stmts, "s3:GetObject", objectARN("athena-results/q.csv")) {
			t.Errorf("prefix %q: the crawler may read outside the data prefix", prefix)
		}
		for _, st := range stmts {
			for _, a := range st.Actions {
				if strings.HasSuffix(a, "*") || strings.HasPrefix(a, "s3:Put") || strings.HasPrefix(a, "s3:Delete") ||
					a == "glue:UpdateTable" || a == "glue:DeleteTable" || a == "glue:CreateTable" {
					t.Errorf("crawler policy grants %s", a)
				}
			}
			if strings.HasPrefix(st.Actions[0], "glue:") && !slices.Contains(st.Resources, "arn:aws:glue:eu-west-1:"+pipelineAccount+":catalog") {
				t.Errorf("glue statement %s without the catalog resource: %v", st.Sid, st.Resources)
			}
		}
		trust := policyStatements(t, s, "crawler_trust")
		if len(trust) != 1 || !slices.Equal(trust[0].Principals["Service"], []string{"glue.amazonaws.com"}) {
			t.Errorf("crawler trust = %+v", trust)
		}
	}
}
