package chart_test

// The chart must reject what the exporter rejects, and accept what it
// accepts, so that a bad value fails `helm install` instead of the first
// run at midnight. Each case sets values through helm and the matching
// variables in the exporter's own validation (config.Load), and both must
// agree. Where helm accepts, the exporter also checks the rendered env.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
)

// set is one value: its path under exporter, the value, and the variable
// the exporter reads it from (with its string form).
type set struct {
	key string
	val any
}

func (s set) env() (string, string) {
	switch v := s.val.(type) {
	case []string:
		return envOf[s.key], strings.Join(v, ", ")
	case map[string]any:
		switch s.key {
		case "clusterArns":
			var pairs []string
			for _, id := range slices.Sorted(maps.Keys(v)) {
				pairs = append(pairs, id+"="+fmt.Sprint(v[id]))
			}
			return envOf[s.key], strings.Join(pairs, ",")
		case "clusterMapConfigMap":
			return envOf[s.key], "/etc/kubecost-s3-exporter/cluster-map/" + fmt.Sprint(v["key"])
		case "objectStoreExistingSecret":
			return envOf[s.key], "/etc/kubecost-s3-exporter/object-store/" + fmt.Sprint(v["key"])
		}
		if s.key == "httpHeadersExistingSecret" {
			return envOf[s.key], "/var/run/secrets/kubecost-s3-exporter/http-headers/" + fmt.Sprint(v["key"])
		}
		return envOf[s.key], "/var/run/secrets/kubecost-s3-exporter/bearer-token/" + fmt.Sprint(v["key"])
	}
	return envOf[s.key], renderScalar(s.val)
}

type parityCase struct {
	sets []set
	ok   bool // accepted by both
}

func one(key string, val any, ok bool) parityCase { return parityCase{[]set{{key, val}}, ok} }

// fed is a federated case: the map inline, clusterId unset.
func fed(m map[string]any, ok bool) parityCase {
	return parityCase{[]set{{"clusterId", ""}, {"clusterArns", m}}, ok}
}

func parityCases() []parityCase {
	cases := []parityCase{
		// CLUSTER_ID across partitions and regions.
		one("clusterId", "arn:aws:eks:us-east-1:111122223333:cluster/prod", true),
		one("clusterId", "arn:aws-cn:eks:cn-northwest-1:111122223333:cluster/prod_1", true),
		one("clusterId", "arn:aws-us-gov:eks:us-gov-west-1:111122223333:cluster/gov", true),
		one("clusterId", "arn:aws-iso-b:eks:us-isob-east-1:111122223333:cluster/x", true),
		one("clusterId", "prod", false),
		one("clusterId", "arn:aws:eks:us-east-1:11112222333:cluster/prod", false),
		one("clusterId", "arn:aws:eks:useast1:111122223333:cluster/prod", false),
		one("clusterId", "arn:aws:eks:us-east-1:111122223333:cluster/-prod", false),
		one("clusterId", "arn:aws:eks:us-east-1:111122223333:nodegroup/prod", false),
		one("clusterId", "arn:azure:eks:us-east-1:111122223333:cluster/prod", false),
		// The federated map instead of CLUSTER_ID (CLUSTER_ARNS,
		// CLUSTER_MAP_FILE) and its companions.
		fed(map[string]any{"prod-eu-1": "arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu", "b.c/d e": "arn:aws:eks:us-east-1:111122223333:cluster/b"}, true),
		fed(map[string]any{"a": "prod"}, false),
		fed(map[string]any{`a"b`: "arn:aws:eks:eu-west-1:111122223333:cluster/a"}, false),
		fed(map[string]any{"a*": "arn:aws:eks:eu-west-1:111122223333:cluster/a"}, false),
		fed(map[string]any{"a": "arn:aws:eks:eu-west-1:111122223333:cluster/a", "b": "arn:aws:eks:eu-west-1:111122223333:cluster/a"}, false),
		fed(map[string]any{"a": "arn:aws:eks:eu-west-1:111122223333:cluster/a", "b": "arn:aws-cn:eks:cn-north-1:111122223333:cluster/b"}, false),
		fed(map[string]any{"a": "arn:aws:eks:eu-west-1:111122223333:cluster/a", "b": "arn:aws:eks:eu-west-1:444455556666:cluster/b"}, false),
		{[]set{{"clusterId", ""}, {"expectedBucketOwner", "111122223333"},
			{"clusterArns", map[string]any{"a": "arn:aws:eks:eu-west-1:111122223333:cluster/a", "b": "arn:aws:eks:eu-west-1:444455556666:cluster/b"}}}, true},
		one("clusterArns", map[string]any{"a": "arn:aws:eks:eu-west-1:111122223333:cluster/a"}, false), // and clusterId
		{[]set{{"clusterId", ""}, {"clusterMapConfigMap", map[string]any{"name": "fleet", "key": "bad key!"}}}, false},
		one("clusterFilter", "v1", true),
		one("clusterFilter", "V2", false),
		// With an endpoint: OpenCost is not discovered, so without one the
		// exporter would refuse the case for that and not for the filter.
		{[]set{{"clusterFilter", "v1"}, {"kubecostApiFlavor", "opencost"}, {"kubecostApiEndpoint", "http://opencost.opencost:9003"}}, false},
		one("failOnUnmappedClusters", true, true),
		// S3_BUCKET_NAME.
		one("s3BucketName", "abc", true),
		one("s3BucketName", "cca.data-1", true),
		one("s3BucketName", strings.Repeat("a", 63), true),
		one("s3BucketName", "999.1.1.1", true),
		one("s3BucketName", strings.Repeat("a", 64), false),
		one("s3BucketName", "ab", false),
		one("s3BucketName", "Cca-data", false),
		one("s3BucketName", "cca_data", false),
		one("s3BucketName", "-cca", false),
		one("s3BucketName", "cca.", false),
		one("s3BucketName", "cca..data", false),
		one("s3BucketName", "10.0.0.1", false),
		one("s3BucketName", "xn--cca", false),
		one("s3BucketName", "sthree-cca", false),
		one("s3BucketName", "amzn-s3-demo-cca", false),
		one("s3BucketName", "cca-s3alias", false),
		one("s3BucketName", "cca--ol-s3", false),
		one("s3BucketName", "cca.mrap", false),
		one("s3BucketName", "cca--x-s3", false),
		one("s3BucketName", "cca--table-s3", false),
		// An access point alias or ARN (docs/object-store-config.md).
		one("s3BucketName", "cca-ap-hrzrlukc5m36ft7okagglf3gmwluquse1b-s3alias", true),
		one("s3BucketName", "arn:aws:s3:eu-west-1:444455556666:accesspoint/cca-ap", true),
		one("s3BucketName", "cca-ap-"+strings.Repeat("a", 50)+"-s3alias", false),
		one("s3BucketName", "cca-ap-abc123-ext-s3alias", false),
		one("s3BucketName", "cca-ap-o01ac5d28a6a232904e8xz5w8ijx1qzlbp3i3kuse10--op-s3", false),
		one("s3BucketName", "arn:aws:s3-outposts:us-west-2:444455556666:outpost/op-01ac5d28a6a232904/accesspoint/cca", false),
		one("s3BucketName", "arn:aws:s3:eu-west-1:444455556666:accesspoint/Cca", false),
		one("s3BucketName", "arn:aws:s3:euwest1:444455556666:accesspoint/cca", false),
		one("s3BucketName", "arn:aws:s3:::cca-data", false),
		// S3_PREFIX.
		one("s3Prefix", "costs/", true),
		one("s3Prefix", "team-a/costs/", true),
		one("s3Prefix", "costs", false),
		one("s3Prefix", "/costs/", false),
		one("s3Prefix", "a//b/", false),
		one("s3Prefix", `a\b/`, false),
		// KUBECOST_API_ENDPOINT, _FLAVOR, _PATH.
		one("kubecostApiEndpoint", "http://kubecost:9090", true),
		one("kubecostApiEndpoint", "https://kubecost.example.com/kubecost/", true),
		one("kubecostApiEndpoint", "kubecost:9090", false),
		one("kubecostApiEndpoint", "ftp://kubecost", false),
		one("kubecostApiEndpoint", "http://", false),
		one("kubecostApiEndpoint", "http://kubecost?x=1", false),
		one("kubecostApiEndpoint", "http://kubecost#x", false),
		// Other flavours than kubecost need their URL (not discovered).
		{[]set{{"kubecostApiFlavor", "opencost"}, {"kubecostApiEndpoint", "http://opencost.opencost:9003"}}, true},
		{[]set{{"kubecostApiFlavor", "cost-model"}, {"kubecostApiEndpoint", "http://kubecost-aggregator.kubecost:9004"}}, true},
		one("kubecostApiFlavor", "OpenCost", false),
		one("kubecostApiPath", "/allocation/compute", true),
		one("kubecostApiPath", "allocation", false),
		one("kubecostApiPath", "/allocation?x=1", false),
		// Numbers.
		one("backfillPeriodDays", 3, true),
		one("backfillPeriodDays", 3650, true),
		one("backfillPeriodDays", 2, false),
		one("backfillPeriodDays", 3651, false),
		one("settleHours", 0, true),
		one("settleHours", 720, true),
		one("settleHours", -1, false),
		one("settleHours", 721, false),
		one("backfillAllAvailable", true, true),
		one("backfillMaxDays", 91, true),
		one("backfillMaxDays", 3650, true),
		one("backfillMaxDays", 2, false),
		one("backfillMaxDays", 3651, false),
		one("maxClusterDaysPerRun", 5000, true),
		one("maxClusterDaysPerRun", 1000000, true),
		one("maxClusterDaysPerRun", -1, false),
		one("maxClusterDaysPerRun", 1000001, false),
		one("runBudget", "50m", true),
		one("runBudget", "2h30m", true),
		one("runBudget", "168h", true),
		one("runBudget", "0", true),
		one("runBudget", "169h", false),
		one("runBudget", "160h600m", false),
		one("runBudget", "3600", false),
		one("runBudget", "1.5h", false),
		one("runBudget", "500ms", false),
		one("driftTolerance", "0.1%", true),
		one("driftTolerance", "0.001", true),
		one("driftTolerance", "100%", true),
		one("driftTolerance", "1", true),
		one("driftTolerance", " 2.5 % ", true),
		one("driftTolerance", "101%", false),
		one("driftTolerance", "1.5", false),
		one("driftTolerance", "one percent", false),
		one("driftTolerance", ".", false),
		one("driftTolerance", "0", true),
		one("connectionTimeout", 0.5, true),
		one("connectionTimeout", 86400, true),
		one("connectionTimeout", 0, false),
		one("connectionTimeout", -1, false),
		one("connectionTimeout", 86401, false),
		one("readTimeout", 1, true),
		one("readTimeout", 0, false),
		one("s3RequestTimeout", 0.5, true),
		one("s3RequestTimeout", 0, false),
		one("s3RequestTimeout", 86401, false),
		one("s3PartSizeMiB", 5, true),
		one("s3PartSizeMiB", 5120, true),
		one("s3PartSizeMiB", 4, false),
		one("s3PartSizeMiB", 5121, false),
		one("maxRetries", 0, true),
		one("maxRetries", 20, true),
		one("maxRetries", 21, false),
		one("maxRetries", -1, false),
		one("maxValueBytes", 4096, true),
		one("maxValueBytes", 1073741824, true),
		one("maxValueBytes", 4095, false),
		one("maxValueBytes", 1073741825, false),
		one("concurrency", 8, true),
		one("concurrency", 0, false),
		one("concurrency", 9, false),
		// Booleans.
		one("paginate", true, true),
		one("tlsVerify", false, true),
		one("dryRun", true, true),
		// Enumerations.
		one("granularity", "hourly", true),
		one("granularity", "weekly", false),
		one("aggregation", "Container", false),
		one("compression", "gzip", true),
		one("compression", "lz4", false),
		one("logLevel", "warn", true),
		one("logLevel", "trace", false),
		one("logFormat", "auto", true),
		one("logFormat", "logfmt", false),
		one("pushgatewayUrl", "http://prometheus-pushgateway.monitoring:9091", true),
		one("pushgatewayUrl", "https://ops:secret@push.example.com/prefix/", true),
		one("pushgatewayUrl", "prometheus-pushgateway:9091", false),
		one("pushgatewayUrl", "http://", false),
		one("pushgatewayUrl", "http://push?job=x", false),
		one("pushgatewayUrl", "http://push#x", false),
		one("sse", "AES256", true),
		one("sse", "aes256", false),
		// Secrets Manager names and regions.
		one("caCertificateSecretName", "kubecost/ca_bundle+=.@-", true),
		one("caCertificateSecretName", "kubecost ca", false),
		one("caCertificateSecretName", strings.Repeat("a", 513), false),
		one("caCertificateSecretRegion", "us-gov-west-1", true),
		one("caCertificateSecretRegion", "cn-north-1", true),
		one("caCertificateSecretRegion", "us-isob-east-1", true),
		one("caCertificateSecretRegion", "useast1", false),
		one("caCertificateSecretRegion", "US-EAST-1", false),
		one("bearerTokenSecretName", "kubecost/token", true),
		one("bearerTokenSecretName", "kubecost token", false),
		one("bearerTokenExistingSecret", map[string]any{"name": "kubecost-token", "key": "token"}, true),
		// The headers Secret: a valid one is rendered as a path the
		// exporter reads at start (headers_test.go); a bad key is refused
		// by the schema, and the exporter finds no such file.
		one("httpHeadersExistingSecret", map[string]any{"name": "kubecost-api-key", "key": "bad key!"}, false),
		// Discovery (KUBECOST_API_ENDPOINT empty) and where it looks.
		one("kubecostApiEndpoint", "", true),
		{[]set{{"kubecostApiEndpoint", ""}, {"kubecostApiFlavor", "opencost"}}, false},
		{[]set{{"kubecostApiEndpoint", "http://opencost.opencost:9003"}, {"kubecostApiFlavor", "opencost"}}, true},
		one("kubecostNamespace", "finops-1", true),
		one("kubecostNamespace", "FinOps", false),
		one("kubecostNamespace", strings.Repeat("n", 64), false),
		one("kubecostRelease", "my-cost-analyzer", true),
		one("kubecostRelease", "kubecost.prod", false),
		one("kubecostRelease", strings.Repeat("r", 54), false),
		// The file's content is the exporter's to check (a Secret the chart
		// cannot read); the chart checks the Secret's name and key. The
		// exporter refuses here too: the path names no file on this machine.
		one("objectStoreExistingSecret", map[string]any{"name": "Kubecost_Store", "key": "object-store.yaml"}, false),
		one("objectStoreExistingSecret", map[string]any{"name": "kubecost-store", "key": "a/b.yaml"}, false),
		// Roles.
		one("irsaParentRoleArn", "arn:aws:iam::444455556666:role/parent", true),
		one("irsaParentRoleArn", "arn:aws:iam::444455556666:role/cca/team-a/parent", true),
		one("irsaParentRoleArn", "arn:aws:iam::444455556666:user/parent", false),
		one("irsaParentRoleArn", "arn:aws:iam::4444:role/parent", false),
		one("irsaParentRoleArn", "arn:aws-cn:iam::444455556666:role/parent", false), // other partition than the cluster
		one("expectedBucketOwner", "444455556666", true),
		one("expectedBucketOwner", "disabled", true),
		one("expectedBucketOwner", "Disabled", false),
		one("expectedBucketOwner", "4444", false),
		// Label and annotation keys.
		one("labels", []string{"app", "app.kubernetes.io/name", "team_1"}, true),
		one("labels", []string{"-app"}, false),
		one("labels", []string{"a/b/c"}, false),
		one("labels", []string{"Example.com/app"}, false),
		one("labels", []string{strings.Repeat("a", 64)}, false),
		one("labels", []string{"app", "app"}, false),
		one("annotations", []string{"owner.example.com/cost-center"}, true),
		one("annotations", []string{"owner..example.com/x"}, false),
		// FORCE_DATES.
		one("forceDates", []string{"2024-02-29"}, true),
		one("forceDates", []string{"2026-02-29"}, false),
		one("forceDates", []string{"2026-13-01"}, false),
		one("forceDates", []string{"26-01-01"}, false),
		// Cross-field rules.
		{[]set{{"sse", "aws:kms"}, {"sseKmsKeyId", "alias/cca"}}, true},
		{[]set{{"sse", "AES256"}, {"sseKmsKeyId", "alias/cca"}}, false},
		{[]set{{"bearerTokenFile", "/t"}, {"bearerTokenSecretName", "kubecost/token"}}, false},
		{[]set{{"outputDir", "/tmp/out"}, {"s3BucketName", ""}}, true},
		{[]set{{"s3BucketName", ""}}, false},
	}
	return cases
}

// TestParityCoversEveryRule reuses the exporter's rule table: each variable
// the exporter validates beyond its type must be rejected by at least one
// parity case, so a new rule cannot land without a chart check beside it.
func TestParityCoversEveryRule(t *testing.T) {
	t.Parallel()
	rejected := map[string]bool{}
	for _, c := range parityCases() {
		if c.ok {
			continue
		}
		env := map[string]string{"CLUSTER_ID": clusterARN, "S3_BUCKET_NAME": bucket}
		for _, s := range c.sets {
			k, v := s.env()
			env[k] = v
		}
		var errs exporter.FieldErrors
		if !errors.As(exporterAccepts(env), &errs) {
			continue // TestSchemaMirrorsExporter reports the case
		}
		for _, e := range errs {
			rejected[e.Field] = true
		}
	}
	chartVars := map[string]bool{}
	for _, v := range config.Vars() {
		chartVars[v.Name] = true
	}
	for _, r := range config.Rules() {
		// AWS_REGION's rule is the run's too, but EKS sets the variable in
		// the pod and the chart has no value for it (config.Vars).
		if !rejected[r.Var] && chartVars[r.Var] {
			t.Errorf("no parity case makes the exporter reject %s: add one to parityCases", r.Var)
		}
	}
}

func TestSchemaMirrorsExporter(t *testing.T) {
	t.Parallel()
	helm(t) // skip or fail early when helm is missing
	// Helm splits --values on commas, which subtest names contain.
	dir := t.TempDir()
	for i, c := range parityCases() {
		var names []string
		for _, s := range c.sets {
			b, _ := json.Marshal(s.val)
			names = append(names, s.key+"="+string(b))
		}
		t.Run(strings.Join(names, ","), func(t *testing.T) {
			t.Parallel()
			// A values file, not --set: helm applies --set after --set-json.
			exp := map[string]any{"clusterId": clusterARN, "s3BucketName": bucket}
			env := map[string]string{"CLUSTER_ID": clusterARN, "S3_BUCKET_NAME": bucket}
			for _, s := range c.sets {
				exp[s.key] = s.val
				k, v := s.env()
				env[k] = v
			}
			b, err := json.Marshal(map[string]any{"exporter": exp})
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, fmt.Sprintf("case-%03d.json", i))
			if err := os.WriteFile(file, b, 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"--values", file}
			exporterErr := exporterAccepts(env)
			if (exporterErr == nil) != c.ok {
				t.Fatalf("test case is wrong: the exporter's verdict on %v is %v", env, exporterErr)
			}
			out, stderr, helmErr := runHelm(t, templateArgs(args...)...)
			switch {
			case c.ok && helmErr != nil:
				t.Fatalf("the exporter accepts %v but helm rejects it:\n%s", env, stderr)
			case !c.ok && helmErr == nil:
				t.Fatalf("the exporter rejects %v (%v) but helm accepts it", env, exporterErr)
			case c.ok:
				rd := decode(t, out)
				for kind, spec := range rd.podSpecs(t) {
					if err := exporterAccepts(envMap(t, exporterContainer(t, spec))); err != nil {
						t.Errorf("%s: the exporter rejects the rendered env: %v", kind, err)
					}
				}
			}
		})
	}
}
