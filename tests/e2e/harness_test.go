// Package e2e_test runs the exporter end to end, as its users do: the
// command (cli.Main and cli.RunWith in-process, or the built binary) with
// its environment, against the Kubecost/OpenCost simulator and a real
// MinIO, reading every file back with an independent Parquet reader. Its
// model is litestream's tests/integration: one harness for every test,
// here for a single cluster and for a federated Kubecost alike (a fleet
// is the same harness with a fleet simulator), one parser of the run's
// summary line, and shared fixtures. The command's own logic (summary
// wording, error brevity, logging) is tested in exporter/cli.
package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/miniotest"
)

// harness is one MinIO bucket and one Kubecost shared by a test's runs:
// a single cluster's simulator (sim), or with newFleetHarness a federated
// primary of several clusters (fleet) that the runs map with CLUSTER_ARNS.
type harness struct {
	t     *testing.T
	now   func() time.Time
	s3    *s3.Client
	minio *miniotest.Server
	sim   *kubecostsim.Server
	fleet *kubecostsim.FleetServer // nil for a single cluster
	env   map[string]string
	logs  bytes.Buffer
}

const (
	bucket     = "cca-data"
	clusterARN = "arn:aws:eks:us-east-1:111122223333:cluster/prod"
	aggregate  = "cluster,node,namespace,pod,container"
	labelKey   = "app.kubernetes.io/name"
)

var now = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func newHarness(t *testing.T) *harness {
	return newHarnessAt(t, func() time.Time { return now })
}

// newHarnessAt is newHarness with the clock of the simulator and of the
// runs, for tests that run the exporter binary, which has the real clock.
func newHarnessAt(t *testing.T, clock func() time.Time) *harness {
	m := miniotest.Start(t)
	m.CreateBucket(t, bucket)
	sim := newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 15, Now: clock})

	// The SDK reads static credentials from the process environment.
	t.Setenv("AWS_ACCESS_KEY_ID", m.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", m.SecretKey)
	t.Setenv("AWS_REGION", "us-east-1")
	for _, k := range []string{"AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE", "AWS_SESSION_TOKEN"} {
		t.Setenv(k, "")
	}
	env := map[string]string{
		"S3_BUCKET_NAME":        bucket,
		"CLUSTER_ID":            clusterARN,
		"KUBECOST_API_ENDPOINT": sim.URL,
		"BACKFILL_PERIOD_DAYS":  "20", // longer than the retention: Kubecost limits the plan
		"LABELS":                labelKey,
		"KUBECOST_MAX_RETRIES":  "1",
		"AWS_ENDPOINT_URL_S3":   m.Endpoint,
		// Nothing listens here: the identity check fails fast and is only a warning.
		"AWS_ENDPOINT_URL_STS": "http://" + closedAddr(t),
		"LOG_FORMAT":           "json",
	}
	for k, v := range env {
		if strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, v)
		}
	}
	return &harness{t: t, now: clock, s3: m.S3Client(t), minio: m, sim: sim, env: env}
}

func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// run executes `kubecost-s3-exporter run` in-process and returns its exit
// status and this run's log lines.
func (h *harness) run(extra map[string]string) (int, string) {
	h.t.Helper()
	env := maps.Clone(h.env)
	maps.Copy(env, extra)
	code, logs := runEnv(env, h.now)
	h.logs.WriteString(logs)
	return code, logs
}

type object struct {
	key, etag string
	modified  time.Time
}

func (h *harness) objects() map[string]object { return h.objectsIn(bucket) }

func (h *harness) objectsIn(bucket string) map[string]object {
	h.t.Helper()
	out := map[string]object{}
	p := s3.NewListObjectsV2Paginator(h.s3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			h.t.Fatal(err)
		}
		for _, o := range page.Contents {
			out[*o.Key] = object{*o.Key, aws.ToString(o.ETag), aws.ToTime(o.LastModified)}
		}
	}
	return out
}

func (h *harness) put(key, body string) {
	h.t.Helper()
	_, err := h.s3.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)})
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) get(key string) []byte {
	h.t.Helper()
	out, err := h.s3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		h.t.Fatal(err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// layoutOf is the key layout of a member, from its ARN alone.
func layoutOf(m kubecostsim.Member) exporter.Layout {
	arn := strings.Split(m.ARN(), ":")
	return exporter.Layout{Account: arn[4], Region: arn[3], Cluster: strings.TrimPrefix(arn[5], "cluster/")}
}

type storedObject struct {
	etag string
	meta map[string]string
}

// under lists the objects under prefix, keyed without it, with their
// ETags and user metadata.
func (h *harness) under(prefix string) map[string]storedObject {
	h.t.Helper()
	out := map[string]storedObject{}
	for k := range h.objects() {
		rel, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		head, err := h.s3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
		if err != nil {
			h.t.Fatal(err)
		}
		out[rel] = storedObject{aws.ToString(head.ETag), head.Metadata}
	}
	return out
}

// newFleetHarness is the harness whose Kubecost is a federated primary of
// four clusters in two accounts and two regions (kubecostsim.DemoFleet),
// mapped with CLUSTER_ARNS instead of CLUSTER_ID.
func newFleetHarness(t *testing.T, mod func(*kubecostsim.FleetConfig)) *harness {
	h := newHarness(t)
	cfg := kubecostsim.DemoFleet(h.now, kubecostsim.FlavorKubecost)
	if mod != nil {
		mod(&cfg)
	}
	fs := kubecostsim.NewFleetServer(cfg)
	t.Cleanup(fs.Close)
	delete(h.env, "CLUSTER_ID")
	h.env["CLUSTER_ARNS"] = fs.Fleet.ClusterARNs()
	h.env["KUBECOST_API_ENDPOINT"] = fs.URL
	// The clusters are in two accounts; the bucket is in one of them.
	h.env["S3_EXPECTED_BUCKET_OWNER"] = "111122223333"
	h.env["CONCURRENCY"] = "3"
	h.fleet = fs
	return h
}

// newCoreFleetHarness is newFleetHarness with a primary that treats idle
// as the core does (kubecostsim.FleetConfig.RealCore): a response filtered
// to one cluster also holds every other cluster's idle rows, and
// "data-platform" has a node that runs nothing, whose full idle cost is in
// every other cluster's responses.
func newCoreFleetHarness(t *testing.T, flavor kubecostsim.Flavor, mod func(*kubecostsim.FleetConfig)) *harness {
	return newFleetHarness(t, func(c *kubecostsim.FleetConfig) {
		*c = kubecostsim.DemoFleet(c.Now, flavor)
		c.RealCore = true
		c.Members[3].Config.IdleNodes = 1
		if mod != nil {
			mod(c)
		}
	})
}

// newSim starts a single cluster's simulator, at the tests' clock unless
// cfg.Now says otherwise, closed with the test.
func newSim(t *testing.T, cfg kubecostsim.Config) *kubecostsim.Server {
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return now }
	}
	sim := kubecostsim.NewServer(cfg)
	t.Cleanup(sim.Close)
	return sim
}

// runEnv runs `run` in-process with env, at clock (nil: the tests' now),
// and returns its exit status and output.
func runEnv(env map[string]string, clock func() time.Time) (int, string) {
	if clock == nil {
		clock = func() time.Time { return now }
	}
	var buf bytes.Buffer
	code := cli.RunWith(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &buf, cli.Hooks{Now: clock})
	return code, buf.String()
}

// lastLine is the last line of a run's output.
func lastLine(logs string) string {
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	return lines[len(lines)-1]
}

// summaryOf decodes the run's last log line, which must be its summary
// (CONTRACT §5): the one parser of the summary, single or federated.
func summaryOf(t *testing.T, logs string) map[string]any {
	t.Helper()
	var last map[string]any
	if err := json.Unmarshal([]byte(lastLine(logs)), &last); err != nil {
		t.Fatalf("last log line is not JSON: %v\n%s", err, lastLine(logs))
	}
	if !strings.HasPrefix(fmt.Sprint(last["msg"]), "run summary") {
		t.Fatalf("last line is not the summary: %s", lastLine(logs))
	}
	return last
}

// assertSummary checks the summary's days planned and written and that it
// carries rows, bytes and duration.
func assertSummary(t *testing.T, logs string, planned, written int) {
	t.Helper()
	last := summaryOf(t, logs)
	if last["days_planned"] != float64(planned) || last["days_written"] != float64(written) {
		t.Errorf("summary %v, want days_planned=%d days_written=%d", last, planned, written)
	}
	for _, f := range []string{"rows", "bytes", "duration"} {
		if _, ok := last[f]; !ok {
			t.Errorf("summary lacks %s: %v", f, last)
		}
	}
}

// fleetSummary checks a federated run's summary: days written and failed,
// and a line short enough for a log view.
func fleetSummary(t *testing.T, logs string, written, failed int) map[string]any {
	t.Helper()
	last := summaryOf(t, logs)
	if last["days_written"] != float64(written) || last["days_failed"] != float64(failed) || len(lastLine(logs)) > 400 {
		t.Errorf("summary %v, want days_written=%d days_failed=%d", last, written, failed)
	}
	return last
}
