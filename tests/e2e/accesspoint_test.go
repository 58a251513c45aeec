package e2e_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
)

// TestAccessPointAliasOnMinIO: an access point alias as S3_BUCKET_NAME is
// written and read back. MinIO has no access points; the alias-shaped
// name (a valid bucket name, as every alias is) is an ordinary bucket
// there. So this proves that an alias passes the exporter's checks and
// reaches an S3 server unchanged through run and report, not that AWS
// routes it: exporter/destination's TestAccessPointRequests holds the
// requests to AWS's endpoint rules.
func TestAccessPointAliasOnMinIO(t *testing.T) {
	h := newHarness(t)
	const alias = "cca-ap-hrzrlukc5m36ft7okagglf3gmwluquse1b-s3alias"
	h.minio.CreateBucket(t, alias)
	env := maps.Clone(h.env)
	env["S3_BUCKET_NAME"] = alias
	env["BACKFILL_PERIOD_DAYS"] = "7"
	code, logs := runEnv(env, h.now)
	if code != cli.ExitOK {
		t.Fatalf("run: exit %d\n%s", code, logs)
	}
	written := 0
	for k := range h.objectsIn(alias) {
		if strings.HasPrefix(k, "account_id=") {
			written++
		}
	}
	if written == 0 || len(h.objects()) != 0 {
		t.Fatalf("run wrote %d objects to %s and %d objects to %s:\n%s", written, alias, len(h.objects()), bucket, logs)
	}
	if got := reportFiles(t, env); got != written {
		t.Errorf("report read %d files, run wrote %d", got, written)
	}
}
