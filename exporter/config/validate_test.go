package config

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
)

const (
	testCluster = "arn:aws:eks:us-east-1:111122223333:cluster/prod"
	unset       = "\x00unset" // removes a base variable
)

// baseEnv is the smallest valid environment.
func baseEnv() map[string]string {
	return map[string]string{"S3_BUCKET_NAME": "kubecost-cost-data", "CLUSTER_ID": testCluster}
}

func loadWith(overrides map[string]string) (*Config, error) {
	env := baseEnv()
	for k, v := range overrides {
		if v == unset {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	return Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

// knownBugs lists cases that currently fail, with why. Such a case is
// skipped while it fails and reported once it passes, so the list cannot
// go stale: delete the entry when fixing validate.go.
var knownBugs = map[string]string{}

func knownBug(t *testing.T, name string, failed bool) bool {
	t.Helper()
	why, known := knownBugs[name]
	switch {
	case known && failed:
		t.Skipf("known bug: %s", why)
	case known && !failed:
		t.Errorf("%s now passes: remove it from knownBugs", name)
	}
	return failed && !known
}

// Every variable, with values that must be accepted.
func TestValidValues(t *testing.T) {
	t.Parallel()
	good := map[string][]string{
		"S3_BUCKET_NAME": {"abc", "a.b", "kubecost-cost-data", "cost.data.2024", strings.Repeat("a", 63), "1bucket"},
		"S3_PREFIX":      {"team-a/", "team-a/costs/", "a b/", "x=1/"},
		// The bucket of baseEnv, so the two agree.
		"OBJECT_STORE_CONFIG_FILE": {"testdata/object-store.yaml"},
		"CLUSTER_ID": {testCluster, "arn:aws:eks:eu-central-2:111122223333:cluster/a",
			"arn:aws-cn:eks:cn-north-1:111122223333:cluster/bj", "arn:aws-cn:eks:cn-northwest-1:111122223333:cluster/nx",
			"arn:aws-us-gov:eks:us-gov-west-1:111122223333:cluster/gov", "arn:aws-us-gov:eks:us-gov-east-1:111122223333:cluster/gov",
			"arn:aws-iso:eks:us-iso-east-1:111122223333:cluster/c", "arn:aws-iso-b:eks:us-isob-east-1:111122223333:cluster/c",
			"arn:aws-eusc:eks:eusc-de-east-1:111122223333:cluster/c", "arn:aws:eks:ap-southeast-5:111122223333:cluster/Prod_2-x",
			"arn:aws:eks:us-east-1:111122223333:cluster/" + strings.Repeat("c", 100)},
		"KUBECOST_API_ENDPOINT": {"http://kubecost-cost-analyzer.kubecost:9090", "https://kubecost.example.com",
			"http://10.0.0.1:9003/", "https://kubecost.example.com/prefix/path"},
		"KUBECOST_NAMESPACE":                   {"kubecost", "finops-1", strings.Repeat("n", 63)},
		"KUBECOST_RELEASE":                     {"kubecost", "kc", "my-cost-analyzer", strings.Repeat("r", 53)},
		"KUBECOST_HTTP_HEADERS_FILE":           writeHeaderFiles(t),
		"KUBECOST_API_FLAVOR":                  names(kubecost.Flavors()),
		"KUBECOST_API_PATH":                    {"/model/allocation", "/allocation/compute", "/"},
		"BACKFILL_PERIOD_DAYS":                 {"3", "15", "3650"},
		"SETTLE_HOURS":                         {"0", "48", "72", "720"},
		"AGGREGATION":                          Aggregations(),
		"GRANULARITY":                          {"daily", "hourly"},
		"KUBECOST_ALLOCATION_API_PAGINATE":     {"yes", "no", "y", "n", "true", "false", "YES", "True", " n "},
		"CONNECTION_TIMEOUT":                   {"10", "0.5", "86400", "1e1"},
		"KUBECOST_ALLOCATION_API_READ_TIMEOUT": {"60", "300", "0.001"},
		"S3_REQUEST_TIMEOUT":                   {"60", "1", "0.5"},
		"S3_PART_SIZE_MIB":                     {"5", "8", "5120"},
		"TLS_VERIFY":                           {"true", "false", "Y", "No"},
		"KUBECOST_MAX_RETRIES":                 {"0", "4", "20"},
		"MAX_VALUE_BYTES":                      {"4096", "1048576", "1073741824"},
		"KUBECOST_CA_CERTIFICATE_SECRET_NAME":  {"kubecost/ca", "a", "ca_bundle+v2=x.y@z-1", strings.Repeat("s", 512)},
		"KUBECOST_CA_CERTIFICATE_SECRET_REGION": {"us-east-1", "eu-west-3", "us-gov-west-1", "us-gov-east-1", "cn-north-1",
			"cn-northwest-1", "ap-southeast-5", "il-central-1", "mx-central-1", "me-central-1", "ca-west-1",
			"us-iso-east-1", "us-isob-east-1", "us-isof-south-1", "eu-isoe-west-1", "eusc-de-east-1"},
		"KUBECOST_BEARER_TOKEN_FILE":        {"/var/run/secrets/kubecost/token", "token"},
		"KUBECOST_BEARER_TOKEN_SECRET_NAME": {"kubecost/oidc-token"},
		"IRSA_PARENT_IAM_ROLE_ARN": {"arn:aws:iam::222233334444:role/kubecost-s3-exporter",
			"arn:aws:iam::222233334444:role/pipeline/team-a/writer", "arn:aws:iam::222233334444:role/a+=,.@_-b",
			"arn:aws:iam::222233334444:role/" + strings.Repeat("r", 64)},
		"S3_EXPECTED_BUCKET_OWNER": {"222233334444", "disabled"},
		"S3_SSE":                   {"AES256", "aws:kms"},
		"S3_SSE_KMS_KEY_ID": {"arn:aws:kms:us-east-1:222233334444:key/1234abcd-12ab-34cd-56ef-1234567890ab",
			"alias/kubecost", "1234abcd-12ab-34cd-56ef-1234567890ab"},
		"LABELS":                    {"app", "app, app.kubernetes.io/name", "team,", "a_b.c-d", "example.com/x", strings.Repeat("l", 63)},
		"ANNOTATIONS":               {"owner", "eks.amazonaws.com/role-arn, a"},
		"OUTPUT_DIR":                {"/tmp/out", "out"},
		"COMPRESSION":               {"snappy", "zstd", "gzip"},
		"CONCURRENCY":               {"1", "8"},
		"BACKFILL_ALL_AVAILABLE":    {"true", "no"},
		"BACKFILL_MAX_DAYS":         {"3", "15", "91", "400", "3650"},
		"MAX_CLUSTER_DAYS_PER_RUN":  {"0", "1", "5000", "1000000"},
		"RUN_BUDGET":                {"0", "50m", "2h30m", "90s", "1h2m3s", "168h", " 45m "},
		"DRY_RUN":                   {"yes", "false"},
		"FORCE_DATES":               {"2024-01-01", "2024-02-29, 2024-03-01", "2024-01-01,"},
		"REEXPORT_ON_CONFIG_CHANGE": {"true", "no"},
		"DRIFT_TOLERANCE":           {"0.1%", "0.001", "0", "0%", "100%", "1", " 2.5 % "},
		"REEXPORT_LEGACY":           {"yes", "false"},
		"LOG_LEVEL":                 LogLevels(),
		"LOG_FORMAT":                LogFormats(),
		"PUSHGATEWAY_URL": {"http://prometheus-pushgateway.monitoring:9091", "https://push.example.com/prefix",
			"http://ops:secret@10.0.0.1:9091"},
		"CLUSTER_ARNS": {"prod-eu=arn:aws:eks:eu-west-1:111122223333:cluster/prod-eu",
			" a = arn:aws:eks:eu-west-1:111122223333:cluster/a , b.c/d e=arn:aws:eks:us-east-1:111122223333:cluster/b,"},
		"CLUSTER_MAP_FILE":          writeMapFiles(t),
		"FAIL_ON_UNMAPPED_CLUSTERS": {"true", "no"},
		"KUBECOST_CLUSTER_FILTER":   names(kubecost.ClusterFilters()),
	}
	for _, v := range Vars() {
		if _, ok := good[v.Name]; !ok {
			t.Errorf("no valid values listed for %s: every variable needs cases", v.Name)
		}
	}
	// Variables only valid alongside another.
	with := map[string]map[string]string{"S3_SSE_KMS_KEY_ID": {"S3_SSE": "aws:kms"},
		// Only a Kubecost frontend is found without its URL.
		"KUBECOST_API_FLAVOR": {"KUBECOST_API_ENDPOINT": "http://opencost.opencost:9003"}}
	maps.Copy(with, federatedWith)
	for name, values := range good {
		for _, value := range values {
			t.Run(name+"="+value, func(t *testing.T) {
				t.Parallel()
				env := map[string]string{name: value}
				for k, v := range with[name] {
					env[k] = v
				}
				_, err := loadWith(env)
				if knownBug(t, name+"="+value, err != nil) {
					t.Errorf("rejected: %v", err)
				}
			})
		}
	}
	// Pairs that are only valid together.
	for _, env := range []map[string]string{
		{"S3_SSE": "aws:kms", "S3_SSE_KMS_KEY_ID": "arn:aws:kms:us-east-1:222233334444:key/1234abcd-12ab-34cd-56ef-1234567890ab"},
		{"S3_SSE": "aws:kms", "S3_SSE_KMS_KEY_ID": "alias/kubecost"},
		{"S3_BUCKET_NAME": unset, "OUTPUT_DIR": "/tmp/out"},
		{"CLUSTER_ID": "arn:aws-cn:eks:cn-north-1:111122223333:cluster/c", "IRSA_PARENT_IAM_ROLE_ARN": "arn:aws-cn:iam::222233334444:role/w"},
		{"CLUSTER_ID": "arn:aws-us-gov:eks:us-gov-west-1:111122223333:cluster/c", "IRSA_PARENT_IAM_ROLE_ARN": "arn:aws-us-gov:iam::222233334444:role/w"},
	} {
		if _, err := loadWith(env); err != nil {
			t.Errorf("%v rejected: %v", env, err)
		}
	}
}

// Every bad value yields exactly one error, on one line, naming the
// variable, the value as given and what is accepted.
func TestInvalidValues(t *testing.T) {
	t.Parallel()
	secretMsg := "or a Secrets Manager secret ARN"
	regionMsg := "accepted: an AWS region code such as us-east-1, us-gov-west-1 or cn-north-1"
	roleMsg := "accepted: an IAM role ARN, arn:<partition>:iam::<12-digit account>:role/[path/]<name>"
	clusterMsg := "accepted: an EKS cluster ARN, arn:<partition>:eks:<region>:<12-digit account>:cluster/<name>"
	flagMsg := "accepted: yes, no, y, n, true, false (case-insensitive)"
	bucketMsg := "accepted: 3-63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit"
	keyName := "the name part must be 1-63 characters"
	bad := []struct{ name, value, want string }{
		{"S3_BUCKET_NAME", "ab", bucketMsg},
		{"S3_BUCKET_NAME", strings.Repeat("a", 64), bucketMsg},
		{"S3_BUCKET_NAME", "Kubecost-Data", bucketMsg},
		{"S3_BUCKET_NAME", "my_bucket", bucketMsg},
		{"S3_BUCKET_NAME", "-bucket", bucketMsg},
		{"S3_BUCKET_NAME", "bucket-", bucketMsg},
		{"S3_BUCKET_NAME", "bucket.", bucketMsg},
		{"S3_BUCKET_NAME", "s3://bucket", bucketMsg},
		{"S3_BUCKET_NAME", "my..bucket", "must not contain two adjacent dots"},
		{"S3_BUCKET_NAME", "192.168.5.4", "must not be formatted as an IP address"},
		{"S3_BUCKET_NAME", "xn--bucket", `must not start with "xn--"`},
		{"S3_BUCKET_NAME", "sthree-bucket", `must not start with "sthree-"`},
		{"S3_BUCKET_NAME", "amzn-s3-demo-bucket", `must not start with "amzn-s3-demo-"`},
		{"S3_BUCKET_NAME", "bucket-s3alias", "an access point alias is <access point name>-<metadata>-s3alias"},
		{"S3_BUCKET_NAME", "bucket--ol-s3", `must not end with "--ol-s3"`},
		{"S3_BUCKET_NAME", "bucket.mrap", `must not end with ".mrap"`},
		{"S3_BUCKET_NAME", "bucket--x-s3", `must not end with "--x-s3"`},
		{"S3_BUCKET_NAME", "bucket--table-s3", `must not end with "--table-s3"`},
		{"S3_PREFIX", "team-a", "ends with /"},
		{"S3_PREFIX", "/team-a/", "does not start with /"},
		{"S3_PREFIX", "a//b/", "accepted: a key prefix"},
		{"S3_PREFIX", `a\b/`, "accepted: a key prefix"},
		{"S3_PREFIX", "a\nb/", "accepted: a key prefix"},
		{"OBJECT_STORE_CONFIG_FILE", "testdata/nonexistent.yaml", "cannot read the file"},
		{"OBJECT_STORE_CONFIG_FILE", "testdata/gcs-store.yaml", "type GCS is not supported"},
		{"CLUSTER_ID", "prod", clusterMsg},
		{"CLUSTER_ID", "arn:aws:eks:us-east-1:11112222333:cluster/prod", clusterMsg},
		{"CLUSTER_ID", "arn:aws:eks:us-east:111122223333:cluster/prod", clusterMsg},
		{"CLUSTER_ID", "arn:aws:eks:us-east-1:111122223333:nodegroup/prod/ng/x", clusterMsg},
		{"CLUSTER_ID", "arn:aws-xyz:eks:us-east-1:111122223333:cluster/prod", clusterMsg},
		{"CLUSTER_ID", "arn:aws:eks:us-east-1:111122223333:cluster/-prod", clusterMsg},
		{"CLUSTER_ID", "arn:aws:eks:us-east-1:111122223333:cluster/pr.od", clusterMsg},
		{"CLUSTER_ID", "arn:aws:eks:us-east-1:111122223333:cluster/" + strings.Repeat("c", 101), clusterMsg},
		{"KUBECOST_API_ENDPOINT", "kubecost-cost-analyzer.kubecost:9090", "accepted: http://<host>"},
		{"KUBECOST_API_ENDPOINT", "ftp://kubecost", "accepted: http://<host>"},
		{"KUBECOST_API_ENDPOINT", "http://", "accepted: http://<host>"},
		{"KUBECOST_API_ENDPOINT", "http://kubecost:9090?window=1d", "accepted: http://<host>"},
		{"KUBECOST_API_ENDPOINT", "http://kubecost:9090#x", "accepted: http://<host>"},
		{"KUBECOST_NAMESPACE", "Kubecost", "accepted: a Kubernetes namespace name"},
		{"KUBECOST_NAMESPACE", strings.Repeat("n", 64), "accepted: a Kubernetes namespace name"},
		{"KUBECOST_RELEASE", "kubecost.prod", "accepted: a Helm release name"},
		{"KUBECOST_RELEASE", strings.Repeat("r", 54), "accepted: a Helm release name"},
		{"KUBECOST_HTTP_HEADERS_FILE", "/nonexistent/headers", "no such file"},
		{"KUBECOST_API_FLAVOR", "OpenCost", "accepted: kubecost, cost-model, opencost"},
		{"KUBECOST_API_PATH", "model/allocation", "accepted: a path starting with /"},
		{"KUBECOST_API_PATH", "/model/allocation?x=1", "accepted: a path starting with /"},
		{"BACKFILL_PERIOD_DAYS", "2", "accepted: an integer from 3 to 3650"},
		{"BACKFILL_PERIOD_DAYS", "-1", "accepted: an integer from 3 to 3650"},
		{"BACKFILL_PERIOD_DAYS", "3651", "accepted: an integer from 3 to 3650"},
		{"BACKFILL_PERIOD_DAYS", "abc", "accepted: an integer"},
		{"BACKFILL_PERIOD_DAYS", "3.5", "accepted: an integer"},
		{"AGGREGATION", "Container", "accepted: container, pod, namespace, controller, controllerKind, node, cluster"},
		{"AGGREGATION", "deployment", "accepted: container, pod"},
		{"GRANULARITY", "weekly", "accepted: daily, hourly"},
		{"GRANULARITY", "Daily", "accepted: daily, hourly"},
		{"KUBECOST_ALLOCATION_API_PAGINATE", "1", flagMsg},
		{"KUBECOST_ALLOCATION_API_PAGINATE", "on", flagMsg},
		{"S3_REQUEST_TIMEOUT", "0", "accepted: a number of seconds > 0"},
		{"S3_REQUEST_TIMEOUT", "soon", "accepted: a number of seconds"},
		{"S3_PART_SIZE_MIB", "4", "accepted: 5 MiB to 5 GiB"},
		{"S3_PART_SIZE_MIB", "8MiB", "accepted: an integer"},
		{"CONNECTION_TIMEOUT", "0", "accepted: a number of seconds > 0"},
		{"CONNECTION_TIMEOUT", "-5", "accepted: a number of seconds > 0"},
		{"CONNECTION_TIMEOUT", "86401", "<= 86400"},
		{"CONNECTION_TIMEOUT", "ten", "accepted: a number of seconds"},
		{"CONNECTION_TIMEOUT", "Inf", "accepted: a number of seconds"},
		{"CONNECTION_TIMEOUT", "10m", "accepted: a number of seconds"},
		{"CONNECTION_TIMEOUT", "1.5h", "accepted: a number of seconds"},
		{"CONNECTION_TIMEOUT", "NaN", "accepted: a number of seconds"},
		{"KUBECOST_ALLOCATION_API_READ_TIMEOUT", "0", "accepted: a number of seconds > 0"},
		{"TLS_VERIFY", "maybe", flagMsg},
		{"TLS_VERIFY", "0", flagMsg},
		{"KUBECOST_MAX_RETRIES", "-1", "accepted: an integer from 0 to 20"},
		{"KUBECOST_MAX_RETRIES", "21", "accepted: an integer from 0 to 20"},
		{"MAX_VALUE_BYTES", "4095", "accepted: an integer from 4096 to 1073741824"},
		{"MAX_VALUE_BYTES", "1MiB", "accepted: an integer"},
		{"KUBECOST_CA_CERTIFICATE_SECRET_NAME", "kubecost ca", secretMsg},
		{"KUBECOST_CA_CERTIFICATE_SECRET_NAME", "ca!", secretMsg},
		{"KUBECOST_CA_CERTIFICATE_SECRET_NAME", strings.Repeat("s", 513), secretMsg},
		{"KUBECOST_CA_CERTIFICATE_SECRET_REGION", "us-east", regionMsg},
		{"KUBECOST_CA_CERTIFICATE_SECRET_REGION", "US-EAST-1", regionMsg},
		{"KUBECOST_CA_CERTIFICATE_SECRET_REGION", "us_east_1", regionMsg},
		{"KUBECOST_CA_CERTIFICATE_SECRET_REGION", "useast1", regionMsg},
		{"KUBECOST_CA_CERTIFICATE_SECRET_REGION", "us-east-1a", regionMsg},
		{"KUBECOST_CA_CERTIFICATE_SECRET_REGION", "eu-west-100", regionMsg},
		{"KUBECOST_BEARER_TOKEN_SECRET_NAME", "token?", secretMsg},
		{"IRSA_PARENT_IAM_ROLE_ARN", "kubecost-s3-exporter", roleMsg},
		{"IRSA_PARENT_IAM_ROLE_ARN", "arn:aws:iam::22223333444:role/w", roleMsg},
		{"IRSA_PARENT_IAM_ROLE_ARN", "arn:aws:iam::222233334444:user/w", roleMsg},
		{"IRSA_PARENT_IAM_ROLE_ARN", "arn:aws:sts::222233334444:assumed-role/w/s", roleMsg},
		{"IRSA_PARENT_IAM_ROLE_ARN", "arn:aws:iam:us-east-1:222233334444:role/w", roleMsg},
		{"IRSA_PARENT_IAM_ROLE_ARN", "arn:aws:iam::222233334444:role/" + strings.Repeat("r", 65), roleMsg},
		{"IRSA_PARENT_IAM_ROLE_ARN", "arn:aws:iam::222233334444:role/a b", roleMsg},
		{"IRSA_PARENT_IAM_ROLE_ARN", "arn:aws-cn:iam::222233334444:role/w", `the role's partition "aws-cn" differs from the cluster's "aws"`},
		{"IRSA_PARENT_IAM_ROLE_ARN", "arn:aws-us-gov:iam::222233334444:role/w", "roles cannot be assumed across partitions"},
		{"S3_EXPECTED_BUCKET_OWNER", "12345", "accepted: a 12-digit account ID, or disabled"},
		{"S3_EXPECTED_BUCKET_OWNER", "1234567890123", "accepted: a 12-digit account ID, or disabled"},
		{"S3_EXPECTED_BUCKET_OWNER", "Disabled", "accepted: a 12-digit account ID, or disabled"},
		{"S3_SSE", "aes256", "accepted: AES256, aws:kms"},
		{"S3_SSE", "KMS", "accepted: AES256, aws:kms"},
		{"S3_SSE", "aws:kms:dsse", "accepted: AES256, aws:kms"},
		{"S3_SSE_KMS_KEY_ID", "alias/kubecost", "only valid with S3_SSE=aws:kms"},
		{"LABELS", "app name", keyName},
		{"LABELS", "-app", keyName},
		{"LABELS", "app/", keyName},
		{"LABELS", "a/b/c", keyName},
		{"LABELS", strings.Repeat("l", 64), keyName},
		{"LABELS", "/app", "the prefix must be a DNS subdomain"},
		{"LABELS", "Example.com/app", "the prefix must be a lowercase DNS subdomain"},
		{"LABELS", "app, team, app", `"app" is listed twice`},
		{"ANNOTATIONS", "owner!", keyName},
		{"COMPRESSION", "lz4", "accepted: snappy, zstd, gzip"},
		{"COMPRESSION", "SNAPPY", "accepted: snappy, zstd, gzip"},
		{"CONCURRENCY", "0", "accepted: an integer from 1 to 8"},
		{"CONCURRENCY", "9", "accepted: an integer from 1 to 8"},
		{"DRY_RUN", "dry", flagMsg},
		{"FORCE_DATES", "2024-13-01", `"2024-13-01" is not a YYYY-MM-DD date`},
		{"FORCE_DATES", "2023-02-29", `"2023-02-29" is not a YYYY-MM-DD date`},
		{"FORCE_DATES", "2024-01-01,20240102", `"20240102" is not a YYYY-MM-DD date`},
		{"FORCE_DATES", "2024-1-1", "is not a YYYY-MM-DD date"},
		{"SETTLE_HOURS", "-1", "accepted: an integer from 0 to 720"},
		{"BACKFILL_ALL_AVAILABLE", "all", "accepted: yes, no, y, n, true, false (case-insensitive)"},
		{"BACKFILL_MAX_DAYS", "2", "accepted: an integer from 3 to 3650"},
		{"BACKFILL_MAX_DAYS", "3651", "accepted: an integer from 3 to 3650"},
		{"BACKFILL_MAX_DAYS", "91d", "accepted: an integer"},
		{"MAX_CLUSTER_DAYS_PER_RUN", "-1", "accepted: an integer from 0 to 1000000"},
		{"MAX_CLUSTER_DAYS_PER_RUN", "1000001", "accepted: an integer from 0 to 1000000"},
		{"RUN_BUDGET", "3600", "accepted: 0, or whole hours, minutes and seconds"},
		{"RUN_BUDGET", "1.5h", "accepted: 0, or whole hours, minutes and seconds"},
		{"RUN_BUDGET", "500ms", "accepted: 0, or whole hours, minutes and seconds"},
		{"RUN_BUDGET", "169h", "accepted: 0, or whole hours, minutes and seconds"},
		{"RUN_BUDGET", "-5m", "accepted: 0, or whole hours, minutes and seconds"},
		{"RUN_BUDGET", "1d", "accepted: 0, or whole hours, minutes and seconds"},
		{"SETTLE_HOURS", "721", "accepted: an integer from 0 to 720"},
		{"SETTLE_HOURS", "48h", "accepted: an integer"},
		{"REEXPORT_ON_CONFIG_CHANGE", "always", flagMsg},
		{"REEXPORT_LEGACY", "1", flagMsg},
		{"DRIFT_TOLERANCE", "-0.1%", "accepted: a percentage from 0% to 100%"},
		{"DRIFT_TOLERANCE", "101%", "accepted: a percentage from 0% to 100%"},
		{"DRIFT_TOLERANCE", "1.5", "accepted: a percentage from 0% to 100%"},
		{"DRIFT_TOLERANCE", "NaN", "accepted: a percentage from 0% to 100%"},
		{"DRIFT_TOLERANCE", "0.1 percent", "accepted: a percentage from 0% to 100%"},
		{"LOG_LEVEL", "warning", "accepted: debug, info, warn, error"},
		{"LOG_LEVEL", "INFO", "accepted: debug, info, warn, error"},
		{"LOG_FORMAT", "logfmt", "accepted: auto, json, text"},
		{"KUBECOST_CLUSTER_FILTER", "V2", "accepted: v2, v1"},
		{"FAIL_ON_UNMAPPED_CLUSTERS", "fail", flagMsg},
		{"CLUSTER_ARNS", "prod", `"prod" is not <Kubecost cluster id>=<EKS cluster ARN>`},
		{"CLUSTER_ARNS", "prod=prod", `cluster "prod": "prod" is not an EKS cluster ARN`},
		{"CLUSTER_ARNS", "=arn:aws:eks:eu-west-1:111122223333:cluster/a", "an empty cluster id"},
		{"CLUSTER_ARNS", `a"b=arn:aws:eks:eu-west-1:111122223333:cluster/a`, `contains one of " \ , = *`},
		{"CLUSTER_ARNS", "a=arn:aws:eks:eu-west-1:111122223333:cluster/a,a=arn:aws:eks:eu-west-1:111122223333:cluster/b", `cluster id "a" is listed twice`},
		{"CLUSTER_ARNS", "a=arn:aws:eks:eu-west-1:111122223333:cluster/a,b=arn:aws:eks:eu-west-1:111122223333:cluster/a", "have the same ARN"},
		{"CLUSTER_ARNS", "a=arn:aws:eks:eu-west-1:111122223333:cluster/a,b=arn:aws-cn:eks:cn-north-1:111122223333:cluster/b", "one exporter writes one partition"},
		{"CLUSTER_ARNS", ",", "no cluster"},
		{"CLUSTER_MAP_FILE", "/nonexistent/clusters.yaml", "cannot read the file"},
		{"PUSHGATEWAY_URL", "pushgateway:9091", "accepted: " + exporter.BaseURLAccepted + " of a Prometheus Pushgateway"},
		{"PUSHGATEWAY_URL", "http://push.example.com/?job=x", "accepted: " + exporter.BaseURLAccepted + " of a Prometheus Pushgateway"},
	}
	covered := map[string]bool{}
	for _, tc := range bad {
		covered[tc.name] = true
		name := tc.name + "=" + tc.value
		if len(name) > 80 {
			name = name[:80]
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{tc.name: tc.value}
			maps.Copy(env, federatedWith[tc.name])
			_, err := loadWith(env)
			if msg := checkOneError(err, tc.name, tc.value, tc.want); knownBug(t, tc.name+"="+tc.value, msg != "") {
				t.Error(msg)
			}
			// The other commands that read the variable refuse it alike.
			checkCommands(t, tc.name, tc.value, tc.want)
		})
	}
	for _, v := range Vars() {
		switch v.Name {
		case "KUBECOST_BEARER_TOKEN_FILE", "OUTPUT_DIR": // any path; see TestInvalidCombinations
		default:
			if !covered[v.Name] {
				t.Errorf("no invalid values listed for %s", v.Name)
			}
		}
	}
}

// Secret ARNs are valid secret IDs; they are listed apart because they are
// known bugs (see knownBugs).
func TestSecretARNs(t *testing.T) {
	t.Parallel()
	for name, value := range map[string]string{
		"KUBECOST_CA_CERTIFICATE_SECRET_NAME": "arn:aws:secretsmanager:us-east-1:111122223333:secret:kubecost/ca-AbCdEf",
		"KUBECOST_BEARER_TOKEN_SECRET_NAME":   "arn:aws-us-gov:secretsmanager:us-gov-west-1:111122223333:secret:kc-token-AbCdEf",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := loadWith(map[string]string{name: value, "CLUSTER_ID": "arn:aws-us-gov:eks:us-gov-west-1:111122223333:cluster/c"})
			if knownBug(t, name+"="+value, err != nil) {
				t.Errorf("rejected: %v", err)
			}
		})
	}
}

// checkOneError returns "" when err is exactly one FieldError for name
// with value, whose one-line message contains want.
func checkOneError(err error, name, value, want string) string {
	var errs exporter.FieldErrors
	if !errors.As(err, &errs) {
		return fmt.Sprintf("err = %v (%T), want a config error", err, err)
	}
	if len(errs) != 1 {
		return fmt.Sprintf("%d errors, want 1: %v", len(errs), err)
	}
	fe := errs[0]
	line := err.Error()
	switch {
	case fe.Field != name:
		return fmt.Sprintf("error names %s, want %s: %s", fe.Field, name, line)
	case strings.TrimSpace(fe.Value) != strings.TrimSpace(value):
		return fmt.Sprintf("error reports value %q, want %q: %s", fe.Value, value, line)
	case !strings.HasPrefix(line, name+"="+strconv.Quote(fe.Value)+" is invalid: "):
		return fmt.Sprintf("error does not start with %s=<quoted value> is invalid: %s", name, line)
	case !strings.Contains(line, want):
		return fmt.Sprintf("error %q does not say %q", line, want)
	case strings.ContainsAny(line, "\r\n"):
		return fmt.Sprintf("error spans lines: %q", line)
	}
	return ""
}

func TestInvalidCombinations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env              map[string]string
		name, value, msg string
	}{
		{map[string]string{"S3_BUCKET_NAME": unset}, "S3_BUCKET_NAME", "", "required unless OUTPUT_DIR or OBJECT_STORE_CONFIG_FILE sets the destination"},
		{map[string]string{"S3_BUCKET_NAME": "  "}, "S3_BUCKET_NAME", "", "required unless OUTPUT_DIR or OBJECT_STORE_CONFIG_FILE sets the destination"},
		{map[string]string{"CLUSTER_ID": unset}, "CLUSTER_ID", "", "required: the EKS cluster ARN"},
		{map[string]string{"KUBECOST_BEARER_TOKEN_FILE": "/t", "KUBECOST_BEARER_TOKEN_SECRET_NAME": "kc/token"},
			"KUBECOST_BEARER_TOKEN_FILE", "/t", "not both"},
		{map[string]string{"S3_SSE": "AES256", "S3_SSE_KMS_KEY_ID": "alias/k"}, "S3_SSE_KMS_KEY_ID", "alias/k", "only valid with S3_SSE=aws:kms"},
		{map[string]string{"CLUSTER_ID": "arn:aws-cn:eks:cn-north-1:111122223333:cluster/c", "IRSA_PARENT_IAM_ROLE_ARN": "arn:aws:iam::222233334444:role/w"},
			"IRSA_PARENT_IAM_ROLE_ARN", "arn:aws:iam::222233334444:role/w", `partition "aws" differs from the cluster's "aws-cn"`},
	} {
		_, err := loadWith(tc.env)
		if msg := checkOneError(err, tc.name, tc.value, tc.msg); msg != "" {
			t.Errorf("%v: %s", tc.env, msg)
		}
	}

	// Several bad variables: all reported, in declaration order, one line.
	_, err := loadWith(map[string]string{"BACKFILL_PERIOD_DAYS": "2", "COMPRESSION": "lz4", "S3_SSE": "kms"})
	want := `S3_SSE="kms" is invalid: accepted: AES256, aws:kms; ` +
		`BACKFILL_PERIOD_DAYS="2" is invalid: accepted: an integer from 3 to 3650; ` +
		`COMPRESSION="lz4" is invalid: accepted: snappy, zstd, gzip`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// Empty and blank values mean "use the default", as Helm and Terraform
// render unset optional values that way.
func TestEmptyMeansDefault(t *testing.T) {
	t.Parallel()
	c, err := loadWith(map[string]string{"BACKFILL_PERIOD_DAYS": "", "TLS_VERIFY": " ", "AGGREGATION": "", "CONNECTION_TIMEOUT": ""})
	if err != nil {
		t.Fatal(err)
	}
	if c.BackfillPeriodDays != 15 || !bool(c.TLSVerify) || c.Aggregation != "container" || c.ConnectionTimeout.Duration().Seconds() != 10 {
		t.Errorf("defaults not applied: %+v", c)
	}
	if !c.Discovering() || c.KubecostNamespace != "kubecost" || c.KubecostRelease != "kubecost" || c.Compression != "snappy" || c.Granularity != "daily" {
		t.Errorf("defaults not applied: %+v", c)
	}
}

// BucketOwner is the ExpectedBucketOwner sent with every S3 call.
func TestBucketOwner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "111122223333"}, // the cluster's account
		{map[string]string{"IRSA_PARENT_IAM_ROLE_ARN": "arn:aws:iam::222233334444:role/w"}, "222233334444"},
		{map[string]string{"S3_EXPECTED_BUCKET_OWNER": "444455556666"}, "444455556666"},
		{map[string]string{"S3_EXPECTED_BUCKET_OWNER": "444455556666", "IRSA_PARENT_IAM_ROLE_ARN": "arn:aws:iam::222233334444:role/w"}, "444455556666"},
		{map[string]string{"S3_EXPECTED_BUCKET_OWNER": "disabled", "IRSA_PARENT_IAM_ROLE_ARN": "arn:aws:iam::222233334444:role/w"}, ""},
	} {
		c, err := loadWith(tc.env)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.BucketOwner(); got != tc.want {
			t.Errorf("%v: BucketOwner() = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	sniping := "predictable bucket names invite bucket sniping"
	for _, tc := range []struct {
		env  map[string]string
		want string // "" = no warning
	}{
		{nil, ""},
		{map[string]string{"S3_BUCKET_NAME": "cost-data"}, ""},
		{map[string]string{"S3_BUCKET_NAME": "kubecost-cur"}, ""},
		{map[string]string{"S3_BUCKET_NAME": "cost-data-1"}, ""},
		{map[string]string{"S3_BUCKET_NAME": "my-team-bucket-2"}, ""},
		{map[string]string{"S3_BUCKET_NAME": "costs-111122223333"}, sniping},
		{map[string]string{"S3_BUCKET_NAME": "111122223333-costs"}, sniping},
		{map[string]string{"S3_BUCKET_NAME": "costs-us-east-1"}, sniping},
		{map[string]string{"S3_BUCKET_NAME": "costs.eu-west-2.data"}, sniping},
		{map[string]string{"S3_BUCKET_NAME": "costs-us-gov-west-1"}, sniping},
		{map[string]string{"S3_BUCKET_NAME": "costs-cn-northwest-1"}, sniping},
		{map[string]string{"KUBECOST_API_ENDPOINT": "https://kubecost.example.com", "TLS_VERIFY": "no"}, "TLS_VERIFY is off"},
		{map[string]string{"KUBECOST_API_ENDPOINT": "http://kubecost:9090", "TLS_VERIFY": "no"}, ""},
		{map[string]string{"KUBECOST_ALLOCATION_API_PAGINATE": "yes"}, "only applies to GRANULARITY=hourly"},
		{map[string]string{"KUBECOST_ALLOCATION_API_PAGINATE": "yes", "GRANULARITY": "hourly"}, ""},
	} {
		name := fmt.Sprint(tc.env)
		if b, ok := tc.env["S3_BUCKET_NAME"]; ok {
			name = "warning S3_BUCKET_NAME=" + b
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := loadWith(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			w := strings.Join(c.Warnings(), "\n")
			ok := (tc.want == "" && w == "") || (tc.want != "" && strings.Contains(w, tc.want) && !strings.Contains(w, "\n"))
			if knownBug(t, name, !ok) {
				t.Errorf("warnings %q, want %q", w, tc.want)
			}
		})
	}
}

func TestDerived(t *testing.T) {
	t.Parallel()
	c, err := loadWith(map[string]string{
		"CLUSTER_ID":          "arn:aws-us-gov:eks:us-gov-west-1:111122223333:cluster/gov_1",
		"KUBECOST_API_FLAVOR": "opencost", "KUBECOST_API_ENDPOINT": "http://opencost:9003/",
		"LABELS": "app, app.kubernetes.io/name,", "GRANULARITY": "hourly", "FORCE_DATES": "2024-01-02",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Cluster(); got != (Cluster{ARN: c.ClusterID, Partition: "aws-us-gov", Region: "us-gov-west-1", Account: "111122223333", Name: "gov_1"}) {
		t.Errorf("Cluster() = %+v", got)
	}
	if c.SecretsRegion(c.CASecretRegion) != "us-gov-west-1" {
		t.Errorf("SecretsRegion = %q, want the cluster's region", c.SecretsRegion(c.CASecretRegion))
	}
	if c.AllocationURL() != "http://opencost:9003/allocation/compute" {
		t.Errorf("AllocationURL() = %q", c.AllocationURL())
	}
	if c.AggregateParam() != "cluster,node,namespace,pod,container" || c.Step().Hours() != 1 {
		t.Errorf("AggregateParam() = %q, Step() = %v", c.AggregateParam(), c.Step())
	}
	if got := c.LabelKeys(); len(got) != 2 || got[1] != "app.kubernetes.io/name" {
		t.Errorf("LabelKeys() = %q", got)
	}
	if d := c.ForceDays(); len(d) != 1 || d[0].Format("2006-01-02") != "2024-01-02" {
		t.Errorf("ForceDays() = %v", d)
	}
	c2, err := loadWith(map[string]string{"KUBECOST_CA_CERTIFICATE_SECRET_REGION": "eu-west-1", "KUBECOST_API_PATH": "/custom"})
	if err != nil {
		t.Fatal(err)
	}
	c2.KubecostAPIEndpoint = "http://kubecost-frontend.kubecost:9090/" // what discovery sets
	if c2.SecretsRegion(c2.CASecretRegion) != "eu-west-1" || c2.AllocationURL() != "http://kubecost-frontend.kubecost:9090/custom" {
		t.Errorf("SecretsRegion = %q, AllocationURL() = %q", c2.SecretsRegion(c2.CASecretRegion), c2.AllocationURL())
	}
}
