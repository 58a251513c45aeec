package parquetout

import (
	"strconv"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Test data: a deterministic, random-access generator of realistic
// container allocations. fill(r, i) always produces the same row i, so a
// test can write a million rows and check any of them later without keeping
// them in memory.

const (
	testClusterID   = "arn:aws:eks:eu-west-1:123456789012:cluster/prod"
	testClusterName = "prod"
	testDayMillis   = int64(1767225600000) // 2026-01-01T00:00:00Z
	dayMillis       = int64(24 * 3600 * 1000)
)

var (
	testLabels      = []string{"app.kubernetes.io/name", "team"}
	testAnnotations = []string{"owner"}
)

func testProjection() *schema.Projection {
	return schema.NewProjection(testClusterID, testClusterName, testLabels, testAnnotations)
}

func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

type testNode struct {
	name, providerID, instanceType, zone, arch, capacity, nodegroup, image string
}

type gen struct {
	p                                    *schema.Projection
	namespaces, apps, teams, owners      []string
	containers                           []string
	nodes                                []testNode
	appSlot, teamSlot, ownerSlot         int
	typeSlot, zoneSlot, regionSlot       int
	archSlot, osSlot, capSlot, groupSlot int
	imageSlot                            int
	buf                                  []byte
	appKV, nsKV                          map[string][]schema.KV
	hashes                               []string
}

func newGen(p *schema.Projection) *gen {
	g := &gen{p: p}
	for i := range 40 {
		g.namespaces = append(g.namespaces, "team-"+strconv.Itoa(i%12)+"-ns-"+strconv.Itoa(i))
	}
	for i := range 300 {
		g.apps = append(g.apps, "service-"+strconv.Itoa(i))
	}
	for i := range 12 {
		g.teams = append(g.teams, "squad-"+strconv.Itoa(i))
	}
	for i := range 25 {
		g.owners = append(g.owners, "owner"+strconv.Itoa(i)+"@example.com")
	}
	g.containers = []string{"app", "istio-proxy", "worker", "nginx", "sidecar", "init", "metrics-exporter", "fluent-bit"}
	types := []string{"m5.xlarge", "m5.2xlarge", "m6i.2xlarge", "c5.2xlarge", "r5.2xlarge", "m6g.2xlarge", "g5.2xlarge"}
	zones := []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}
	for i := range 250 {
		h := mix64(uint64(i) + 77)
		id := strconv.FormatUint(h|1<<63, 16) // always 16 digits
		n := testNode{
			name:         "ip-10-0-" + strconv.Itoa(i/250) + "-" + strconv.Itoa(i) + ".eu-west-1.compute.internal",
			providerID:   "aws:///" + zones[h%3] + "/i-0" + id[:16],
			instanceType: types[h%uint64(len(types))],
			zone:         zones[h%3],
			arch:         "amd64",
			capacity:     "ON_DEMAND",
			nodegroup:    "ng-" + strconv.Itoa(int(h>>8)%4),
			image:        "ami-0" + id[:12],
		}
		if n.instanceType == "m6g.2xlarge" {
			n.arch = "arm64"
		}
		if h>>16%3 == 0 {
			n.capacity = "SPOT"
		}
		g.nodes = append(g.nodes, n)
	}
	g.appSlot = p.LabelSlot("app_kubernetes_io_name")
	g.teamSlot = p.LabelSlot("team")
	g.ownerSlot = p.AnnotationSlot("owner")
	g.typeSlot = p.LabelSlot("node_kubernetes_io_instance_type")
	g.regionSlot = p.LabelSlot("topology_kubernetes_io_region")
	g.zoneSlot = p.LabelSlot("topology_kubernetes_io_zone")
	g.archSlot = p.LabelSlot("kubernetes_io_arch")
	g.osSlot = p.LabelSlot("kubernetes_io_os")
	g.capSlot = p.LabelSlot("eks_amazonaws_com_capacityType")
	g.groupSlot = p.LabelSlot("eks_amazonaws_com_nodegroup")
	g.imageSlot = p.LabelSlot("eks_amazonaws_com_nodegroup_image")
	return g
}

// fill makes r row i, as a decoder would: reset, verbatim fields and label
// slots, then Projection.Finish.
func (g *gen) fill(r *schema.Record, i int) {
	p := g.p
	p.Reset(r)
	h := mix64(uint64(i))
	h2 := mix64(h)
	ns := g.namespaces[h%uint64(len(g.namespaces))]
	node := &g.nodes[(h>>8)%uint64(len(g.nodes))]
	app := g.apps[(h>>16)%uint64(len(g.apps))]
	container := g.containers[(h>>24)%uint64(len(g.containers))]

	b := append(g.buf[:0], app...)
	b = append(b, '-')
	b = strconv.AppendUint(b, h2%1e10, 36)
	b = append(b, '-')
	b = strconv.AppendUint(b, h2>>40, 36)
	pod := string(b)
	b = append(b[:0], testClusterName...)
	b = append(b, '/')
	b = append(b, node.name...)
	b = append(b, '/')
	b = append(b, ns...)
	b = append(b, '/')
	b = append(b, pod...)
	b = append(b, '/')
	b = append(b, container...)
	r.Name = string(b)
	g.buf = b

	r.Start = testDayMillis
	r.End = testDayMillis + dayMillis
	g.numbers(r, h2, node)

	r.Props[schema.PropCluster] = testClusterName
	r.Props[schema.PropNamespace] = ns
	r.Props[schema.PropNode] = node.name
	r.Props[schema.PropPod] = pod
	r.Props[schema.PropContainer] = container
	r.Props[schema.PropController] = app
	r.Props[schema.PropControllerKind] = "deployment"
	r.Props[schema.PropProviderID] = node.providerID

	r.Labels[g.typeSlot] = node.instanceType
	r.Labels[g.regionSlot] = "eu-west-1"
	r.Labels[g.zoneSlot] = node.zone
	r.Labels[g.archSlot] = node.arch
	r.Labels[g.osSlot] = "linux"
	r.Labels[g.capSlot] = node.capacity
	r.Labels[g.groupSlot] = node.nodegroup
	r.Labels[g.imageSlot] = node.image
	// A projection without LABELS/ANNOTATIONS has no slots for these.
	if g.appSlot >= 0 {
		r.Labels[g.appSlot] = app
	}
	// Some workloads carry no team label or owner annotation: those columns
	// must come out as "".
	team, owner := "", ""
	if h>>32%4 != 0 {
		team = g.teams[(h>>36)%uint64(len(g.teams))]
	}
	if h>>40%3 != 0 {
		owner = g.owners[(h>>44)%uint64(len(g.owners))]
	}
	if g.teamSlot >= 0 {
		r.Labels[g.teamSlot] = team
	}
	if g.ownerSlot >= 0 {
		r.Annotations[g.ownerSlot] = owner
	}
	g.extras(r, h2, node, ns, app, team, owner)
	p.Finish(r)
}

// numIndex caches schema.DoubleIndex, which is a linear search: the
// generator must not dominate the benchmarks that use it.
var numIndex = func() map[string]int {
	m := map[string]int{}
	for i, n := range schema.DoubleNames() {
		m[n] = i
	}
	return m
}()

// Resolved once; num(r, ixCPUCost, v) is cheaper than a lookup per value.
var (
	ixCpuCoreHours          = numIndex["cpuCoreHours"]
	ixCpuCoreRequestAverage = numIndex["cpuCoreRequestAverage"]
	ixCpuCoreUsageAverage   = numIndex["cpuCoreUsageAverage"]
	ixCpuCores              = numIndex["cpuCores"]
	ixCpuCost               = numIndex["cpuCost"]
	ixCpuEfficiency         = numIndex["cpuEfficiency"]
	ixGpuCost               = numIndex["gpuCost"]
	ixGpuCount              = numIndex["gpuCount"]
	ixGpuHours              = numIndex["gpuHours"]
	ixLoadBalancerCost      = numIndex["loadBalancerCost"]
	ixMinutes               = numIndex["minutes"]
	ixNetworkCost           = numIndex["networkCost"]
	ixNetworkCrossZoneCost  = numIndex["networkCrossZoneCost"]
	ixNetworkReceiveBytes   = numIndex["networkReceiveBytes"]
	ixNetworkTransferBytes  = numIndex["networkTransferBytes"]
	ixPvByteHours           = numIndex["pvByteHours"]
	ixPvBytes               = numIndex["pvBytes"]
	ixPvCost                = numIndex["pvCost"]
	ixRamByteHours          = numIndex["ramByteHours"]
	ixRamByteRequestAverage = numIndex["ramByteRequestAverage"]
	ixRamByteUsageAverage   = numIndex["ramByteUsageAverage"]
	ixRamBytes              = numIndex["ramBytes"]
	ixRamCost               = numIndex["ramCost"]
	ixRamEfficiency         = numIndex["ramEfficiency"]
	ixTotalCost             = numIndex["totalCost"]
	ixTotalEfficiency       = numIndex["totalEfficiency"]
)

func num(r *schema.Record, i int, v float64) { r.Num[i] = v }

// numbers fills the numeric columns the way Kubecost reports a container:
// requests come from a handful of sizes, usage and costs are arbitrary
// floats, and GPU, network, load balancer, volume, shared and external
// figures are 0 for most rows. Getting this mix right matters for the file
// sizes the benchmarks report.
func (g *gen) numbers(r *schema.Record, h uint64, node *testNode) {
	rnd := func(k uint64) float64 { return float64(mix64(h+k)>>11) * 0x1p-53 }
	minutes := 1440.0
	if h%5 == 0 { // pods that lived part of the day
		minutes = float64(1 + h>>8%1439)
	}
	hours := minutes / 60
	cpuSizes := [...]float64{0.05, 0.1, 0.25, 0.5, 1, 2}
	ramSizes := [...]float64{64 << 20, 128 << 20, 256 << 20, 512 << 20, 1 << 30, 4 << 30}
	cpuReq := cpuSizes[h>>16%uint64(len(cpuSizes))]
	ramReq := ramSizes[h>>20%uint64(len(ramSizes))]
	cpuUse := cpuReq * rnd(1) * 1.2
	ramUse := ramReq * rnd(2)
	cpuPrice := 0.031611 // USD per core-hour
	ramPrice := 0.004237 / (1 << 30)
	if node.capacity == "SPOT" {
		cpuPrice, ramPrice = cpuPrice*0.35, ramPrice*0.35
	}

	num(r, ixMinutes, minutes)
	num(r, ixCpuCores, max(cpuReq, cpuUse))
	num(r, ixCpuCoreRequestAverage, cpuReq)
	num(r, ixCpuCoreUsageAverage, cpuUse)
	num(r, ixCpuCoreHours, max(cpuReq, cpuUse)*hours)
	cpuCost := max(cpuReq, cpuUse) * hours * cpuPrice
	num(r, ixCpuCost, cpuCost)
	num(r, ixCpuEfficiency, min(1, cpuUse/cpuReq))
	num(r, ixRamBytes, max(ramReq, ramUse))
	num(r, ixRamByteRequestAverage, ramReq)
	num(r, ixRamByteUsageAverage, ramUse)
	num(r, ixRamByteHours, max(ramReq, ramUse)*hours)
	ramCost := max(ramReq, ramUse) * hours * ramPrice
	num(r, ixRamCost, ramCost)
	num(r, ixRamEfficiency, min(1, ramUse/ramReq))
	total := cpuCost + ramCost

	if node.instanceType == "g5.2xlarge" && h>>24%2 == 0 {
		gpuCost := hours * 1.212
		num(r, ixGpuCount, 1)
		num(r, ixGpuHours, hours)
		num(r, ixGpuCost, gpuCost)
		total += gpuCost
	}
	if h>>28%10 < 3 {
		tx := float64(h >> 30 % (1 << 34))
		num(r, ixNetworkTransferBytes, tx)
		num(r, ixNetworkReceiveBytes, float64(h>>12%(1<<33)))
		cz := tx / (1 << 30) * 0.01
		num(r, ixNetworkCrossZoneCost, cz)
		num(r, ixNetworkCost, cz)
		total += cz
	}
	if h>>36%100 == 0 {
		num(r, ixLoadBalancerCost, hours*0.0225)
		total += hours * 0.0225
	}
	if h>>40%10 == 0 {
		pv := float64(int64(1+h>>44%100) << 30)
		num(r, ixPvBytes, pv)
		num(r, ixPvByteHours, pv*hours)
		pvCost := pv * hours * 0.08 / 730 / (1 << 30)
		num(r, ixPvCost, pvCost)
		total += pvCost
	}
	num(r, ixTotalCost, total)
	num(r, ixTotalEfficiency, (min(1, cpuUse/cpuReq)*cpuCost+min(1, ramUse/ramReq)*ramCost)/(cpuCost+ramCost))
}
