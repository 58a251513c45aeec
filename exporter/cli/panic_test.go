package cli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
)

// TestPanicEndsWithSummary: a panic after the configuration is read (here
// in the lookup the AWS set-up calls) is recovered at the top, logged with
// its stack, and the run still ends with its summary line and exit 1.
func TestPanicEndsWithSummary(t *testing.T) {
	env := map[string]string{
		"S3_BUCKET_NAME": "bucket", "CLUSTER_ID": "arn:aws:eks:us-east-1:111122223333:cluster/prod",
		"KUBECOST_API_ENDPOINT": "http://127.0.0.1:1", "LOG_FORMAT": "json",
	}
	lookup := func(k string) (string, bool) {
		if k == "AWS_ROLE_ARN" { // read by awsauth alone, after the configuration
			panic("boom in the AWS set-up")
		}
		v, ok := env[k]
		return v, ok
	}
	var out bytes.Buffer
	code := cli.RunWith(context.Background(), lookup, &out, cli.Hooks{Now: func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if code != cli.ExitRuntime || !strings.Contains(last, "run summary: failed") || !strings.Contains(last, "internal error: boom in the AWS set-up") {
		t.Fatalf("exit %d, last line %s\n%s", code, last, out.String())
	}
	if !strings.Contains(out.String(), `"stack":"goroutine`) {
		t.Errorf("the panic's stack is not logged:\n%s", out.String())
	}
}
