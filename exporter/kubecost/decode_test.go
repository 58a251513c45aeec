package kubecost

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// quirkyResponse is a Kubecost 2.x hourly response with the awkward parts
// real ones have: unknown fields of every shape, null sets and numbers,
// -0, numbers as strings, non-UTC windows, escapes, duplicate names.
const quirkyResponse = `{
  "code": 200, "status": "success",
  "meta": {"version": "2.4.3", "tags": ["a", 1, null, {"x": [true]}]},
  "data": [
    null,
    {
      "c1/ip-10-0-1-1.ec2.internal/web/web-7d9f-abcde/nginx": {
        "name": "c1/ip-10-0-1-1.ec2.internal/web/web-7d9f-abcde/nginx",
        "properties": {
          "cluster": "c1", "node": "ip-10-0-1-1.ec2.internal", "container": "nginx",
          "controller": "web", "controllerKind": "deployment", "namespace": "web",
          "pod": "web-7d9f-abcde", "services": ["web", "web-internal"], "providerID": "aws:///us-east-1a/i-0abc",
          "labels": {
            "app_kubernetes_io_name": "web \u0026 api",
            "node_kubernetes_io_instance_type": "m5.xlarge",
            "topology_kubernetes_io_region": "us-east-1",
            "topology_kubernetes_io_zone": "us-east-1a",
            "kubernetes_io_arch": "amd64", "kubernetes_io_os": "linux",
            "karpenter_sh_capacity_type": "spot",
            "karpenter_sh_nodepool": "default",
            "karpenter_k8s_aws_instance_ami_id": "ami-123",
            "unrelated": {"nested": [1, 2]}
          },
          "annotations": {"owner": "alice", "other": "x"},
          "namespaceLabels": {"team": "from-namespace-must-be-ignored"},
          "namespaceAnnotations": {"owner": "ignored"},
          "x_future": [null, {"a": "b"}]
        },
        "window": {"start": "2026-10-31T19:00:00-05:00", "end": "2026-10-31T20:00:00-05:00"},
        "start": "2026-11-01T00:00:00Z", "end": "2026-11-01T01:00:00Z",
        "minutes": 60,
        "cpuCores": 0.5, "cpuCoreRequestAverage": "0.5", "cpuCoreUsageAverage": null,
        "cpuCost": 1e-3, "cpuEfficiency": "NaN", "ramEfficiency": "Inf", "totalEfficiency": "-Inf",
        "gpuCount": -0, "gpuCost": -0.0, "networkCost": " 2.5 ", "pvCost": "not a number",
        "ramBytes": 1.5e9, "totalCost": 3.25, "totalCost": 3.5,
        "pvs": {"cluster=c1:name=pv-1": {"byteHours": 10, "cost": 0.1}},
        "rawAllocationOnly": {"cpuCoreUsageMax": 0.1, "gpuUsageMax": null},
        "proportionalAssetResourceCosts": {}, "lbAllocations": null, "sharedCostBreakdown": [],
        "carbonCost": 1.2, "externalCost": true
      },
      "c1/__idle__": {
        "name": "c1/__idle__",
        "properties": {"cluster": "c1"},
        "window": {"start": "2026-11-01T00:00:00.000Z", "end": "2026-11-01T01:00:00.000Z"},
        "totalCost": 4
      },
      "skipped-null-allocation": null
    },
    {
      "c1/ip-10-0-1-2.ec2.internal/ops/job-x/main": {
        "properties": {
          "cluster": "c1", "node": "ip-10-0-1-2.ec2.internal", "namespace": "ops", "pod": "job-x",
          "container": "main", "providerID": "i-0def",
          "labels": {"eks_amazonaws_com_capacityType": "ON_DEMAND", "karpenter_sh_capacity_type": "spot",
            "eks_amazonaws_com_nodegroup": "ng-1", "karpenter_sh_nodepool": "np",
            "eks_amazonaws_com_nodegroup_image": "ami-ng", "team": 42}
        },
        "start": "2026-11-01T01:00:00+00:00", "end": "2026-11-01T02:00:00+00:00",
        "cpuCost": 1E2
      },
      "no-window-at-all": {"totalCost": 1}
    }
  ],
  "warning": "trailing unknown field"
}`

func decodeString(t *testing.T, body string) *memSink {
	t.Helper()
	var sink memSink
	n, err := newDecoder(testProjection()).decode(strings.NewReader(body), testDay, time.Hour, &sink)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(sink.rows) {
		t.Fatalf("decode returned %d, sink has %d", n, len(sink.rows))
	}
	return &sink
}

func TestDecodeQuirks(t *testing.T) {
	sink := decodeString(t, quirkyResponse)
	if len(sink.rows) != 4 {
		t.Fatalf("got %d rows, want 4: %v", len(sink.rows), sink.names())
	}
	p := testProjection()
	num := func(r schema.Record, name string) float64 { return r.Num[schema.DoubleIndex(name)] }
	ms := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMilli()
	}

	web := sink.rows[0]
	if web.Name != "c1/ip-10-0-1-1.ec2.internal/web/web-7d9f-abcde/nginx" {
		t.Errorf("name %q", web.Name)
	}
	if web.Start != ms("2026-11-01T00:00:00Z") || web.End != ms("2026-11-01T01:00:00Z") {
		t.Errorf("window %d..%d: the -05:00 window must convert to UTC", web.Start, web.End)
	}
	for name, want := range map[string]float64{
		"minutes": 60, "cpuCores": 0.5, "cpuCoreRequestAverage": 0.5, "cpuCoreUsageAverage": 0,
		"cpuCost": 0.001, "cpuEfficiency": 0, "ramEfficiency": 0, "totalEfficiency": 0,
		"gpuCount": 0, "gpuCost": 0, "pvCost": 0, "ramBytes": 1.5e9,
		"networkCost":  0,   // " 2.5 " is not a JSON number: white space is refused, as encoding/json's ,string does
		"totalCost":    3.5, // the last duplicate wins, as in encoding/json
		"externalCost": 0,
	} {
		got := num(web, name)
		if got != want || math.Signbit(got) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for i, want := range map[int]string{
		schema.PropCluster: "c1", schema.PropNode: "ip-10-0-1-1.ec2.internal", schema.PropContainer: "nginx",
		schema.PropController: "web", schema.PropControllerKind: "deployment", schema.PropNamespace: "web",
		schema.PropPod: "web-7d9f-abcde", schema.PropProviderID: "aws:///us-east-1a/i-0abc",
		schema.PropProvider: "AWS", schema.PropClusterID: "arn:aws:eks:us-east-1:111122223333:cluster/one",
		schema.PropEKSClusterName: "one", schema.PropNodeInstanceType: "m5.xlarge", schema.PropRegion: "us-east-1",
		schema.PropNodeAvailabilityZone: "us-east-1a", schema.PropNodeArchitecture: "amd64", schema.PropNodeOS: "linux",
		schema.PropNodeCapacityType: "spot", schema.PropNodeNodegroup: "default", schema.PropNodeNodegroupImage: "ami-123",
	} {
		if web.Props[i] != want {
			t.Errorf("properties.%s = %q, want %q", schema.PropName(i), web.Props[i], want)
		}
	}
	if got := p.UserLabel(&web, 0); got != "web & api" {
		t.Errorf("label app.kubernetes.io/name = %q", got)
	}
	if got := p.UserLabel(&web, 1); got != "" {
		t.Errorf("label team = %q: namespaceLabels must be ignored", got)
	}
	if got := p.UserAnnotation(&web, 0); got != "alice" {
		t.Errorf("annotation owner = %q", got)
	}

	idle := sink.rows[1]
	if idle.Name != "c1/__idle__" || num(idle, "totalCost") != 4 || idle.Props[schema.PropNamespace] != "" ||
		idle.Start != ms("2026-11-01T00:00:00Z") || idle.End != ms("2026-11-01T01:00:00Z") {
		t.Errorf("idle row %+v", idle)
	}
	if p.UserLabel(&idle, 0) != "" || p.UserAnnotation(&idle, 0) != "" || idle.Props[schema.PropNodeInstanceType] != "" {
		t.Errorf("idle row carries labels from the previous row: %q %q", idle.Labels, idle.Annotations)
	}

	job := sink.rows[2]
	if job.Name != "c1/ip-10-0-1-2.ec2.internal/ops/job-x/main" {
		t.Errorf("name %q: want the set key when name is missing", job.Name)
	}
	if job.Start != ms("2026-11-01T01:00:00Z") || job.End != ms("2026-11-01T02:00:00Z") {
		t.Errorf("job window %d..%d: want the allocation's start/end when window is missing", job.Start, job.End)
	}
	for i, want := range map[int]string{
		schema.PropNodeCapacityType: "ON_DEMAND", schema.PropNodeNodegroup: "ng-1",
		schema.PropNodeNodegroupImage: "ami-ng", schema.PropProvider: "AWS", schema.PropController: "",
	} {
		if job.Props[i] != want {
			t.Errorf("job properties.%s = %q, want %q", schema.PropName(i), job.Props[i], want)
		}
	}
	if got := p.UserLabel(&job, 1); got != "42" {
		t.Errorf("numeric label = %q, want its text", got)
	}
	if num(job, "cpuCost") != 100 {
		t.Errorf("cpuCost 1E2 = %v", num(job, "cpuCost"))
	}

	// No window anywhere: the third set (index 2) of the request's step.
	bare := sink.rows[3]
	if bare.Name != "no-window-at-all" || bare.Start != ms("2026-11-01T02:00:00Z") || bare.End != ms("2026-11-01T03:00:00Z") {
		t.Errorf("bare row %q %d..%d", bare.Name, bare.Start, bare.End)
	}
}

func TestDecodeResponseShapes(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		rows       int
		err        string
	}{
		{"null set", `{"code":200,"data":[null]}`, 0, ""},
		{"null data", `{"code":200,"data":null}`, 0, ""},
		{"empty sets", `{"code":200,"data":[{},{}]}`, 0, ""},
		{"bare set", `{"code":200,"data":{"a":{"name":"a"}}}`, 1, ""},
		{"data before code", `{"data":[{"a":{"name":"a"}}],"code":200}`, 1, ""},
		{"escaped set key", `{"data":[{"a\u002fb":{"totalCost":1}}]}`, 1, ""},
		{"code 500", `{"code":500,"message":"boom","data":null}`, 0, "response code 500: boom"},
		{"code 400 error field", `{"code":400,"error":"bad window"}`, 0, "response code 400: bad window"},
		{"truncated", `{"code":200,"data":[{"a":{"name":"a"},"b":{"na`, 1, "unexpected EOF"},
		{"invalid", `{"code":200,"data":[{"a":{"name":"a",,}}]}`, 0, "invalid character"},
		{"not an object", `[1,2]`, 0, "expected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sink memSink
			n, err := newDecoder(testProjection()).decode(strings.NewReader(tc.body), testDay, time.Hour, &sink)
			if n != tc.rows || len(sink.rows) != tc.rows {
				t.Errorf("rows: returned %d, written %d, want %d", n, len(sink.rows), tc.rows)
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
	sink := decodeString(t, `{"data":[{"a\u002fb":{"totalCost":1}}]}`)
	if sink.rows[0].Name != "a/b" {
		t.Errorf("escaped set key decoded as %q", sink.rows[0].Name)
	}
}

func TestDecodeSinkError(t *testing.T) {
	boom := errors.New("disk full")
	_, err := newDecoder(testProjection()).decode(strings.NewReader(quirkyResponse), testDay, time.Hour, failingSink{boom})
	var se *sinkError
	if !errors.As(err, &se) || !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the sink's error", err)
	}
}

type failingSink struct{ err error }

func (s failingSink) Write(*schema.Record) error { return s.err }
func (s failingSink) Reset() error               { return nil }

func TestParseTime(t *testing.T) {
	for _, s := range []string{
		"2026-11-01T00:00:00Z", "2026-10-31T19:00:00-05:00", "2026-11-01T05:30:00+05:30",
		"2026-11-01T00:00:00.123Z", "2026-11-01T00:00:00.123456789+01:00", "2024-02-29T23:59:59Z",
		"1969-12-31T23:59:59Z", "2000-03-01T00:00:00z", "2026-11-01t00:00:00Z",
	} {
		want, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := parseTime([]byte(s)); !ok || got != want.UnixMilli() {
			t.Errorf("parseTime(%q) = %d, %v; want %d", s, got, ok, want.UnixMilli())
		}
	}
	for _, s := range []string{"", "2026-11-01", "2026-13-01T00:00:00Z", "2026-11-01T00:00:00", "yesterday", "2026-11-01T00:00:00+5"} {
		if got, ok := parseTime([]byte(s)); ok {
			t.Errorf("parseTime(%q) = %d, want failure", s, got)
		}
	}
}

// The decoder must not allocate per allocation once its caches are warm:
// names and property values repeat across the hours of a day.
func TestDecodeAllocations(t *testing.T) {
	body := []byte(quirkyResponse)
	d := newDecoder(testProjection())
	var sink sumSink
	var r bytes.Reader
	allocs := testing.AllocsPerRun(50, func() {
		r.Reset(body)
		if _, err := d.decode(&r, testDay, time.Hour, &sink); err != nil {
			t.Fatal(err)
		}
	})
	// What remains is jsontext's per-response setup and the error-free
	// ParseFloat of numeric strings.
	t.Logf("%.1f allocations per response", allocs)
	if allocs > 4 {
		t.Errorf("%.0f allocations per response of 4 allocations", allocs)
	}
}

// A body cut anywhere must be an error, or a partial day would be exported
// as a complete one.
func TestDecodeTruncatedAnywhere(t *testing.T) {
	body := quirkyResponse[:strings.LastIndexByte(quirkyResponse, '}')]
	d := newDecoder(testProjection())
	for i := range len(body) {
		var sink memSink
		if _, err := d.decode(strings.NewReader(body[:i]), testDay, time.Hour, &sink); err == nil {
			t.Fatalf("body cut after %d bytes decoded without error: ...%q", i, body[max(0, i-40):i])
		}
	}
}
