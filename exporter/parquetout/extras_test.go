package parquetout

import (
	"strconv"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

// podLabelKeys are the pod labels the generator puts on every row besides
// the node's: with the node's 8 that makes 22 labels, more than the 20 a
// realistic pod carries (Helm, Argo, Istio and team labels).
var podLabelKeys = []string{
	"app", "app_kubernetes_io_instance", "app_kubernetes_io_managed_by", "app_kubernetes_io_part_of",
	"app_kubernetes_io_version", "app_kubernetes_io_component", "helm_sh_chart", "pod_template_hash",
	"security_istio_io_tlsMode", "service_istio_io_canonical_name", "service_istio_io_canonical_revision",
	"env", "cost_center",
}

var nsLabelKeys = []string{
	"kubernetes_io_metadata_name", "team", "env", "cost_center", "istio_injection",
	"owner", "tier", "region", "compliance", "backup",
}

// extras fills the appended columns the way a Kubecost response would:
// every label and annotation, namespace metadata, services, and volumes,
// GPU details and peaks for some rows. Some fields stay null.
func (g *gen) extras(r *schema.Record, h uint64, node *testNode, ns, app, team, owner string) {
	x := &r.X
	labels := &x[schema.XLabels]
	labels.Set = true
	labels.KV = append(labels.KV,
		schema.KV{Key: "node_kubernetes_io_instance_type", Value: node.instanceType},
		schema.KV{Key: "topology_kubernetes_io_region", Value: "eu-west-1"},
		schema.KV{Key: "topology_kubernetes_io_zone", Value: node.zone},
		schema.KV{Key: "kubernetes_io_arch", Value: node.arch},
		schema.KV{Key: "kubernetes_io_os", Value: "linux"},
		schema.KV{Key: "eks_amazonaws_com_capacityType", Value: node.capacity},
		schema.KV{Key: "eks_amazonaws_com_nodegroup", Value: node.nodegroup},
		schema.KV{Key: "eks_amazonaws_com_nodegroup_image", Value: node.image},
		schema.KV{Key: "app_kubernetes_io_name", Value: app},
	)
	if team != "" {
		labels.KV = append(labels.KV, schema.KV{Key: "team", Value: team})
	}
	// Values are built once per app and namespace: the generator must not
	// dominate the benchmarks that use it.
	for i, kv := range g.podLabels(app) {
		if podLabelKeys[i] == "pod_template_hash" {
			kv.Value = g.hashes[h>>20%uint64(len(g.hashes))]
		}
		labels.KV = append(labels.KV, kv)
	}
	ann := &x[schema.XAnnotations]
	ann.Set = true
	if owner != "" {
		ann.KV = append(ann.KV, schema.KV{Key: "owner", Value: owner})
	}
	ann.KV = append(ann.KV, schema.KV{Key: "kubectl_kubernetes_io_restartedAt", Value: "2026-01-01T00:00:00Z"})

	nsl := &x[schema.XNamespaceLabels]
	nsl.Set = true
	nsl.KV = append(nsl.KV, g.nsLabels(ns)...)
	if h>>3%3 == 0 {
		nsa := &x[schema.XNamespaceAnnotations]
		nsa.Set = true
		nsa.KV = append(nsa.KV, schema.KV{Key: "owner", Value: ns})
	}
	if h%5 != 0 {
		svc := &x[schema.XServices]
		svc.Set = true
		svc.List = append(svc.List, app, ns)
	}
	if h>>8%4 == 0 {
		// Efficiency and idle split are null for most rows, as Kubecost
		// omits them for allocations without a GPU or shared idle.
		x[schema.XCPUCostIdle] = schema.Nested{Set: true, Num: float64(h>>40%1000) / 1000}
		x[schema.XGPUEfficiency] = schema.Nested{Set: true, Num: 0}
	}
	if node.instanceType == "g5.2xlarge" {
		gpu := &x[schema.XGPUAllocation]
		gpu.Set = true
		e := schema.Entry{}
		e.Fields[pqcheck.FieldIndex(schema.XGPUAllocation, "gpuModel")] = schema.Opt{Str: "NVIDIA A10G", Set: true}
		e.Fields[pqcheck.FieldIndex(schema.XGPUAllocation, "gpuDevice")] = schema.Opt{Str: "nvidia0", Set: true}
		e.Fields[pqcheck.FieldIndex(schema.XGPUAllocation, "isGPUShared")] = schema.Opt{B: h%2 == 0, Set: true}
		e.Fields[pqcheck.FieldIndex(schema.XGPUAllocation, "gpuUsageAverage")] = schema.Opt{Num: 0.5, Set: true}
		gpu.Entries = append(gpu.Entries, e)
	}
	if h>>12%10 == 0 {
		pvs := &x[schema.XPVs]
		pvs.Set = true
		for i := range 1 + h>>16%2 {
			e := schema.Entry{Key: g.hashes[(h>>24+i)%uint64(len(g.hashes))]}
			e.Fields[pqcheck.FieldIndex(schema.XPVs, "cost")] = schema.Opt{Num: float64(h>>30%100) / 7, Set: true}
			e.Fields[pqcheck.FieldIndex(schema.XPVs, "byteHours")] = schema.Opt{Num: 1 << 34, Set: true}
			e.Fields[pqcheck.FieldIndex(schema.XPVs, "providerID")] = schema.Opt{Str: g.hashes[h>>4%uint64(len(g.hashes))], Set: true}
			pvs.Entries = append(pvs.Entries, e)
		}
	}
	if h>>14%50 == 0 {
		lbs := &x[schema.XLBAllocations]
		lbs.Set = true
		e := schema.Entry{Key: app}
		e.Fields[pqcheck.FieldIndex(schema.XLBAllocations, "cost")] = schema.Opt{Num: 0.54, Set: true}
		e.Fields[pqcheck.FieldIndex(schema.XLBAllocations, "private")] = schema.Opt{B: false, Set: true}
		e.Fields[pqcheck.FieldIndex(schema.XLBAllocations, "service")] = schema.Opt{Str: app, Set: true}
		lbs.Entries = append(lbs.Entries, e)
	}
	raw := &x[schema.XRawAllocationOnly]
	raw.Set = true
	re := schema.Entry{}
	re.Fields[pqcheck.FieldIndex(schema.XRawAllocationOnly, "cpuCoreUsageMax")] = schema.Opt{Num: float64(h>>50) / 1e4, Set: true}
	re.Fields[pqcheck.FieldIndex(schema.XRawAllocationOnly, "ramByteUsageMax")] = schema.Opt{Num: float64(h >> 34), Set: true}
	raw.Entries = append(raw.Entries, re)
}

// podLabels returns the podLabelKeys values of an app, built once.
func (g *gen) podLabels(app string) []schema.KV {
	if kv, ok := g.appKV[app]; ok {
		return kv
	}
	if g.appKV == nil {
		g.appKV = map[string][]schema.KV{}
		for i := range 4096 {
			g.hashes = append(g.hashes, strconv.FormatUint(mix64(uint64(i)+991)>>20, 36))
		}
	}
	kv := make([]schema.KV, len(podLabelKeys))
	for i, k := range podLabelKeys {
		kv[i] = schema.KV{Key: k, Value: app + "-" + strconv.Itoa(i)}
	}
	g.appKV[app] = kv
	return kv
}

// nsLabels returns the nsLabelKeys values of a namespace, built once.
func (g *gen) nsLabels(ns string) []schema.KV {
	if kv, ok := g.nsKV[ns]; ok {
		return kv
	}
	if g.nsKV == nil {
		g.nsKV = map[string][]schema.KV{}
	}
	kv := make([]schema.KV, len(nsLabelKeys))
	for i, k := range nsLabelKeys {
		kv[i] = schema.KV{Key: k, Value: ns + "-" + strconv.Itoa(i)}
	}
	g.nsKV[ns] = kv
	return kv
}
