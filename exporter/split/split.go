package split

import (
	"slices"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Cluster is a cluster as the archive names it: account, region, ARN
// (properties.clusterid) and name.
type Cluster struct{ Account, Region, ARN, Name string }

// PV is one entry of an allocation's pvs: the volume's providerID and cost with adjustment.
type PV struct {
	ProviderID string
	Cost       float64
}

// Alloc is a Kubecost allocation row of a UTC day: a pod on a node, or the node's idle row.
type Alloc struct {
	Cluster                               Cluster
	Day                                   time.Time
	Node, ProviderID                      string
	Namespace, ControllerKind, Controller string
	Pod                                   string
	Idle                                  bool
	Compute, Network, LoadBalancer        float64 // with adjustments
	PVs                                   []PV
}

// Bill is the bill's side: resource-day costs and SCAD's parents.
type Bill struct {
	Resources map[bill.ResourceKey]*bill.ResourceCost
	Parents   map[bill.ParentKey]*bill.ParentCost
}

// Price bases and presence, as the view spells them.
const (
	BasisBill    = "bill"
	BasisList    = "list"
	Both         = "both"
	KubecostOnly = "kubecost_only"
	BillOnly     = "bill_only"
)

// Row is one allocated charge: a row of <prefix>_split_daily.
type Row struct {
	Cluster                         Cluster
	Day                             time.Time
	Kind, ResourceID                string // ResourceID "" = null
	Node, Namespace, ControllerKind string
	Controller, Pod                 string
	Idle                            bool
	Share                           float64
	KubecostCost                    float64
	PublicOnDemand, Amortized, Net  bill.NullFloat // the bill's cost × share; null when unmatched
	PriceBasis, PresentIn           string
}

// InstanceID is the EC2 instance of a providerID (aws:///<zone>/i-... or i-...), "" for none.
func InstanceID(providerID string) string { return lastPart(providerID, "i-") }

// VolumeID is the EBS volume of a PV's providerID: vol-... or aws://<zone>/vol-....
func VolumeID(providerID string) string { return lastPart(providerID, "vol-") }

func lastPart(id, prefix string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	if strings.HasPrefix(id, prefix) && len(id) > len(prefix) {
		return id
	}
	return ""
}

type nodeKey struct {
	cluster Cluster
	day     time.Time
	node    string
}

// Splitter splits the bill a part of the archive at a time, so a reader keeps one
// cluster-day's allocations in memory, not the month's (a node- or volume-day's rows depend
// only on its cluster-day's). It remembers the resource-days matched, for BillOnly.
type Splitter struct {
	billed   Bill
	used     map[bill.ResourceKey]bool
	clusters map[clusterDay]Cluster // the archive's clusters by name and day
}

// clusterDay is a cluster-day as a volume's tag names it: by name in an account and region.
type clusterDay struct {
	account, region, name string
	day                   time.Time
}

// NewSplitter splits over bill.
func NewSplitter(billed Bill) *Splitter {
	return &Splitter{billed: billed, used: map[bill.ResourceKey]bool{}, clusters: map[clusterDay]Cluster{}}
}

// Add splits allocations holding all of each cluster-day they hold (a cluster-day split over
// two calls would be split as two).
func (s *Splitter) Add(allocs []Alloc) []Row {
	allocs = Merge(allocs)
	nodes := map[nodeKey][]int{}
	for i, a := range allocs {
		// Two clusters of one name in an account and region: the least ARN, as the view's MIN.
		ck := clusterDay{a.Cluster.Account, a.Cluster.Region, a.Cluster.Name, a.Day}
		if c, ok := s.clusters[ck]; !ok || a.Cluster.ARN < c.ARN {
			s.clusters[ck] = a.Cluster
		}
		k := nodeKey{a.Cluster, a.Day, a.Node}
		nodes[k] = append(nodes[k], i)
	}
	var out []Row
	for k, idx := range nodes {
		id := "" // the greatest of the node's instance ids, as the view's MAX
		for _, i := range idx {
			id = max(id, InstanceID(allocs[i].ProviderID))
		}
		out = append(out, splitNode(allocs, idx, k, id, bill.KindInstance, func(a *Alloc) float64 { return a.Compute }, s.billed, s.used)...)
		out = append(out, splitNode(allocs, idx, k, id, bill.KindDataTransfer, func(a *Alloc) float64 { return a.Network }, s.billed, s.used)...)
	}
	out = append(out, splitVolumes(allocs, s.billed, s.used)...)
	for i := range allocs {
		if a := &allocs[i]; a.LoadBalancer != 0 {
			out = append(out, allocRow(a, bill.KindLoadBalancer, "", a.LoadBalancer, 1, nil))
		}
	}
	return out
}

// BillOnly is the bill's resource-days no allocation matched; call it after the last Add.
func (s *Splitter) BillOnly() []Row {
	return append(billOnly(s.billed, s.used), billOnlyVolumes(s.billed, s.used, s.clusters)...)
}

// billOnlyVolumes: volumes no PV names whose tag names a cluster of the archive that day
// (bill.ResourceCost.Cluster), each in that cluster's __unallocated__ namespace.
func billOnlyVolumes(billed Bill, used map[bill.ResourceKey]bool, clusters map[clusterDay]Cluster) []Row {
	var out []Row
	for rk, c := range billed.Resources {
		if rk.Kind != bill.KindVolume || c.Cluster == "" || used[rk] {
			continue
		}
		cl, ok := clusters[clusterDay{rk.Account, rk.Region, c.Cluster, rk.Day}]
		if !ok {
			continue
		}
		used[rk] = true
		r := Row{Cluster: cl, Day: rk.Day, Kind: bill.KindVolume, ResourceID: rk.ResourceID, Namespace: schema.UnallocatedName}
		priced(&r, 1, c)
		r.PresentIn = BillOnly
		out = append(out, r)
	}
	return out
}

type allocKey struct {
	cluster                         Cluster
	day                             time.Time
	node, ns, kind, controller, pod string
	idle                            bool
}

// Merge sums allocations of one pod (or idle row) on one node and day, as the view groups the
// archive's per-container rows. PVs are summed per volume, every entry (as the view's UNNEST).
func Merge(allocs []Alloc) []Alloc {
	idx := map[allocKey]int{}
	var out []Alloc
	for _, a := range allocs {
		k := allocKey{a.Cluster, a.Day, a.Node, Namespace(&a), a.ControllerKind, a.Controller, a.Pod, a.Idle}
		pvs := a.PVs
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			a.PVs = nil
			out = append(out, a)
			i = len(out) - 1
		} else {
			m := &out[i]
			m.Compute += a.Compute
			m.Network += a.Network
			m.LoadBalancer += a.LoadBalancer
			if InstanceID(a.ProviderID) > InstanceID(m.ProviderID) { // the view's MAX of instance ids
				m.ProviderID = a.ProviderID
			}
		}
		m := &out[i]
		for _, p := range pvs {
			key := VolumeID(p.ProviderID)
			if j := slices.IndexFunc(m.PVs, func(q PV) bool { return q.ProviderID == key }); j >= 0 {
				m.PVs[j].Cost += p.Cost
			} else {
				m.PVs = append(m.PVs, PV{ProviderID: key, Cost: p.Cost})
			}
		}
	}
	return out
}

// allocRow is a's row of a charge: Kubecost's cost, a's share, and that share of the bill's
// cost c (nil: unmatched, list-priced).
func allocRow(a *Alloc, kind, id string, cost, share float64, c *bill.ResourceCost) Row {
	r := Row{Cluster: a.Cluster, Day: a.Day, Kind: kind, ResourceID: id, Node: a.Node, Namespace: Namespace(a),
		ControllerKind: a.ControllerKind, Controller: a.Controller, Pod: a.Pod, Idle: a.Idle, KubecostCost: cost}
	priced(&r, share, c)
	return r
}

// Namespace is the view's namespace of an allocation: its own, else idle's or unallocated's.
func Namespace(a *Alloc) string {
	switch {
	case a.Namespace != "":
		return a.Namespace
	case a.Idle:
		return schema.IdleName
	}
	return schema.UnallocatedName
}

// shares are weights over their sum; equal when the sum is 0.
func shares(w []float64) []float64 {
	var sum float64
	for _, v := range w {
		sum += v
	}
	out := make([]float64, len(w))
	for i, v := range w {
		if sum == 0 {
			out[i] = 1 / float64(len(w))
		} else {
			out[i] = v / sum
		}
	}
	return out
}

func priced(r *Row, share float64, c *bill.ResourceCost) {
	r.Share = share
	if c == nil {
		r.PriceBasis, r.PresentIn = BasisList, KubecostOnly
		return
	}
	r.PublicOnDemand, r.Amortized, r.Net = bill.Float(share*c.PublicOnDemand), bill.Float(share*c.Amortized), bill.Float(share*c.Net)
	r.PriceBasis, r.PresentIn = BasisBill, Both
}

// splitNode splits a node-day's instance (or data transfer) by weight; data transfer rows only
// when the bill has the line or Kubecost a network cost.
func splitNode(allocs []Alloc, idx []int, k nodeKey, id, kind string, weight func(*Alloc) float64, billed Bill, used map[bill.ResourceKey]bool) []Row {
	var c *bill.ResourceCost
	if id != "" {
		rk := bill.ResourceKey{Account: k.cluster.Account, Region: k.cluster.Region, ResourceID: id, Kind: kind, Day: k.day}
		if c = billed.Resources[rk]; c != nil {
			used[rk] = true
		}
	}
	w := make([]float64, len(idx))
	var total float64
	for j, i := range idx {
		w[j] = weight(&allocs[i])
		total += w[j]
	}
	if kind == bill.KindDataTransfer {
		if c == nil && total == 0 {
			return nil
		}
		if total == 0 { // the node's data transfer by its compute shares
			for j, i := range idx {
				w[j] = allocs[i].Compute
			}
		}
	}
	sh := shares(w)
	var out []Row
	for j, i := range idx {
		out = append(out, allocRow(&allocs[i], kind, id, weight(&allocs[i]), sh[j], c))
	}
	return out
}

type volKey struct {
	cluster Cluster
	day     time.Time
	vol     string
}

type volUse struct {
	alloc int
	cost  float64
}

// splitVolumes splits each volume-day among the allocations naming it by their PV cost.
func splitVolumes(allocs []Alloc, billed Bill, used map[bill.ResourceKey]bool) []Row {
	vols := map[volKey][]volUse{}
	var out []Row
	for i := range allocs {
		a := &allocs[i]
		for _, pv := range a.PVs {
			vol := VolumeID(pv.ProviderID)
			if vol == "" { // no EBS volume: Kubecost's number stays
				out = append(out, allocRow(a, bill.KindVolume, "", pv.Cost, 1, nil))
				continue
			}
			k := volKey{a.Cluster, a.Day, vol}
			vols[k] = append(vols[k], volUse{i, pv.Cost})
		}
	}
	for k, uses := range vols {
		rk := bill.ResourceKey{Account: k.cluster.Account, Region: k.cluster.Region, ResourceID: k.vol, Kind: bill.KindVolume, Day: k.day}
		c := billed.Resources[rk]
		if c != nil {
			used[rk] = true
		}
		w := make([]float64, len(uses))
		for j, u := range uses {
			w[j] = u.cost
		}
		sh := shares(w)
		for j, u := range uses {
			out = append(out, allocRow(&allocs[u.alloc], bill.KindVolume, k.vol, u.cost, sh[j], c))
		}
	}
	return out
}

// billOnly: instances (and their data transfer) SCAD's pod lines put in a cluster, no node matched.
func billOnly(billed Bill, used map[bill.ResourceKey]bool) []Row {
	var out []Row
	for pk, pc := range billed.Parents {
		for _, kind := range []string{bill.KindInstance, bill.KindDataTransfer} {
			rk := bill.ResourceKey{Account: pk.Account, Region: pk.Region, ResourceID: pk.InstanceID, Kind: kind, Day: pk.Day}
			c := billed.Resources[rk]
			if c == nil || used[rk] {
				continue
			}
			used[rk] = true
			r := Row{Cluster: Cluster{Account: pk.Account, Region: pk.Region, ARN: pc.ClusterARN, Name: pc.Cluster},
				Day: pk.Day, Kind: kind, ResourceID: pk.InstanceID, Namespace: schema.UnallocatedName}
			priced(&r, 1, c)
			r.PresentIn = BillOnly
			out = append(out, r)
		}
	}
	return out
}
