package kubecost

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

// rawAlloc is the part of an allocation the appended columns come from,
// decoded with encoding/json as an independent reference.
type rawAlloc struct {
	Properties struct {
		Labels               map[string]string `json:"labels"`
		Annotations          map[string]string `json:"annotations"`
		NamespaceLabels      map[string]string `json:"namespaceLabels"`
		NamespaceAnnotations map[string]string `json:"namespaceAnnotations"`
		Services             []string          `json:"services"`
	} `json:"properties"`
	PVs map[string]*struct {
		ByteHours, Cost float64
		ProviderID      string `json:"providerID"`
	} `json:"pvs"`
	Raw *struct {
		CPUCoreUsageMax float64  `json:"cpuCoreUsageMax"`
		RAMByteUsageMax float64  `json:"ramByteUsageMax"`
		GPUUsageMax     *float64 `json:"gpuUsageMax"`
	} `json:"rawAllocationOnly"`
}

func kvMap(n *schema.Nested) map[string]string {
	if !n.Set {
		return nil
	}
	m := map[string]string{}
	for _, kv := range n.KV {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestDecodeKeepsEverything decodes a simulated day and compares every
// appended column of every row with encoding/json's reading of the same
// body: all labels and annotations (not only LABELS/ANNOTATIONS), the
// namespace's, services, volumes and peaks.
func TestDecodeKeepsEverything(t *testing.T) {
	cfg := simConfig()
	cfg.Quirks.ExtraFields = true
	cfg.Namespaces, cfg.PodsPerNamespace = 8, 12 // enough for volumes
	sim := kubecostsim.New(cfg)
	d := time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)
	v := url.Values{"window": {d.Format(time.RFC3339) + "," + d.Add(24*time.Hour).Format(time.RFC3339)},
		"aggregate": {containerAggregate}, "step": {"1d"}, "idle": {"true"}, "splitIdle": {"true"}, "idleByNode": {"true"}}
	var body bytes.Buffer
	if err := sim.WriteResponse(&body, v); err != nil {
		t.Fatal(err)
	}
	var resp struct{ Data []map[string]rawAlloc }
	if err := json.Unmarshal(body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if _, err := newDecoder(testProjection()).decode(bytes.NewReader(body.Bytes()), d, 24*time.Hour, &sink); err != nil {
		t.Fatal(err)
	}
	if len(resp.Data) != 1 || len(sink.rows) != len(resp.Data[0]) || len(sink.rows) < 50 {
		t.Fatalf("%d rows decoded, %d sets", len(sink.rows), len(resp.Data))
	}
	var labels, services, pvs, raw int
	for i := range sink.rows {
		r := &sink.rows[i]
		want, ok := resp.Data[0][r.Name]
		if !ok {
			t.Fatalf("row %q not in the response", r.Name)
		}
		p := want.Properties
		for name, pair := range map[string][2]map[string]string{
			"labels":               {kvMap(&r.X[schema.XLabels]), p.Labels},
			"annotations":          {kvMap(&r.X[schema.XAnnotations]), p.Annotations},
			"namespaceLabels":      {kvMap(&r.X[schema.XNamespaceLabels]), p.NamespaceLabels},
			"namespaceAnnotations": {kvMap(&r.X[schema.XNamespaceAnnotations]), p.NamespaceAnnotations},
		} {
			if !reflect.DeepEqual(pair[0], pair[1]) {
				t.Fatalf("%s %s:\n got %v\nwant %v", r.Name, name, pair[0], pair[1])
			}
		}
		labels += len(p.Labels)
		if got := r.X[schema.XServices]; !reflect.DeepEqual(append([]string(nil), got.List...), p.Services) || got.Set != (p.Services != nil) {
			t.Fatalf("%s services %v, want %v", r.Name, got.List, p.Services)
		}
		services += len(p.Services)
		gotPV := r.X[schema.XPVs]
		if gotPV.Set != (want.PVs != nil) || len(gotPV.Entries) != len(want.PVs) {
			t.Fatalf("%s pvs %+v, want %+v", r.Name, gotPV, want.PVs)
		}
		for _, e := range gotPV.Entries {
			w := want.PVs[e.Key]
			f := func(n string) schema.Opt { return e.Fields[pqcheck.FieldIndex(schema.XPVs, n)] }
			if w == nil || f("cost").Num != w.Cost || f("byteHours").Num != w.ByteHours || f("providerID").Str != w.ProviderID || !f("adjustment").Set {
				t.Fatalf("%s pv %s = %+v, want %+v", r.Name, e.Key, e, w)
			}
			pvs++
		}
		gotRaw := r.X[schema.XRawAllocationOnly]
		if gotRaw.Set != (want.Raw != nil) {
			t.Fatalf("%s rawAllocationOnly set %v, want %v", r.Name, gotRaw.Set, want.Raw != nil)
		}
		if want.Raw != nil {
			f := func(n string) schema.Opt {
				return gotRaw.Entries[0].Fields[pqcheck.FieldIndex(schema.XRawAllocationOnly, n)]
			}
			if f("cpuCoreUsageMax").Num != want.Raw.CPUCoreUsageMax || f("ramByteUsageMax").Num != want.Raw.RAMByteUsageMax || f("gpuUsageMax").Set {
				t.Fatalf("%s rawAllocationOnly %+v, want %+v", r.Name, gotRaw.Entries[0], want.Raw)
			}
			raw++
		}
		if c := r.X[schema.XCPUCostIdle]; c.Set {
			t.Fatalf("%s cpuCostIdle set to %v, but the response has none", r.Name, c.Num)
		}
	}
	if labels < 20*len(sink.rows)/2 || services == 0 || pvs == 0 || raw == 0 {
		t.Errorf("not exercised: %d labels, %d services, %d volumes, %d peaks in %d rows", labels, services, pvs, raw, len(sink.rows))
	}
}

// TestDecodeNullableShapes: numbers Kubecost could not compute are null in
// the appended columns, never 0; GPU details and load balancers are read
// by field name; shapes that do not fit leave the column null.
func TestDecodeNullableShapes(t *testing.T) {
	sink := decodeString(t, `{"code":200,"data":[{"a":{"name":"a","cpuCostIdle":"NaN","ramCostIdle":null,`+
		`"gpuCostIdle":0.5,"gpuEfficiency":-0,"carbonCost":"Infinity","gpuRequestAverage":"0",`+
		`"gpuAllocation":{"gpuDevice":"nvidia0","gpuModel":"A10G","gpuUUID":null,"isGPUShared":true,"gpuUsageAverage":0.25,"future":[1]},`+
		`"lbAllocations":{"ns/web":{"service":"ns/web","cost":1.5,"private":false,"ip":"10.0.0.1","hours":24},"ns/nil":null},`+
		`"pvs":[],"rawAllocationOnly":{},"properties":{"labels":{"a\"b":"x\\ny"},"services":[],"namespaceLabels":"oops"}}}]}`)
	r := &sink.rows[0]
	x := func(i int) schema.Nested { return r.X[i] }
	for i, want := range map[int]any{
		schema.XCPUCostIdle: nil, schema.XRAMCostIdle: nil, schema.XGPUCostIdle: 0.5, schema.XGPUEfficiency: 0.0,
		schema.XGPURequestAverage: 0.0, schema.XGPUUsageAverage: nil,
	} {
		n := x(i)
		if want == nil && n.Set || want != nil && (!n.Set || n.Num != want.(float64)) {
			t.Errorf("%s = %+v, want %v", schema.Extras()[i].Name, n, want)
		}
	}
	if n := x(schema.XGPUEfficiency); n.Num != 0 || 1/n.Num < 0 {
		t.Errorf("-0 kept its sign")
	}
	gpu := x(schema.XGPUAllocation)
	f := func(n string) schema.Opt { return gpu.Entries[0].Fields[pqcheck.FieldIndex(schema.XGPUAllocation, n)] }
	if !gpu.Set || f("gpuDevice").Str != "nvidia0" || f("gpuModel").Str != "A10G" || f("gpuUUID").Set ||
		!f("isGPUShared").B || !f("isGPUShared").Set || f("gpuUsageAverage").Num != 0.25 || f("gpuRequestAverage").Set {
		t.Errorf("gpuAllocation %+v", gpu)
	}
	lb := x(schema.XLBAllocations)
	if len(lb.Entries) != 1 || lb.Entries[0].Key != "ns/web" {
		t.Fatalf("lbAllocations %+v", lb)
	}
	lf := func(n string) schema.Opt { return lb.Entries[0].Fields[pqcheck.FieldIndex(schema.XLBAllocations, n)] }
	if lf("cost").Num != 1.5 || lf("private").B || !lf("private").Set || lf("ip").Str != "10.0.0.1" || lf("hours").Num != 24 || lf("adjustment").Set {
		t.Errorf("lbAllocations entry %+v", lb.Entries[0])
	}
	if pv := x(schema.XPVs); pv.Set {
		t.Errorf("pvs given as a list: %+v, want null", pv)
	}
	if raw := x(schema.XRawAllocationOnly); !raw.Set || raw.Entries[0] != (schema.Entry{}) {
		t.Errorf("rawAllocationOnly {} = %+v, want a struct of nulls", raw)
	}
	if l := x(schema.XLabels); len(l.KV) != 1 || l.KV[0] != (schema.KV{Key: `a"b`, Value: `x\ny`}) {
		t.Errorf("escaped label %+v", l.KV)
	}
	if s := x(schema.XServices); !s.Set || len(s.List) != 0 {
		t.Errorf("services [] = %+v, want an empty list", s)
	}
	if n := x(schema.XNamespaceLabels); n.Set {
		t.Errorf("namespaceLabels as a string = %+v, want null", n)
	}
}
