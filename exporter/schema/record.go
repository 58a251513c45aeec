package schema

import (
	"math"
	"strings"
)

// Record is one allocation row: a decoder fills the verbatim fields and label slots,
// Projection.Finish derives the rest. Records are reused, so consumers copy what they keep.
type Record struct {
	Name       string
	Start, End int64 // Unix milliseconds, UTC
	Num        [NumDoubles]float64
	Props      [NumProps]string
	// Labels holds label values by slot (Projection.LabelSlot): the node labels of derived
	// properties first, then LABELS.
	Labels      []string
	Annotations []string         // by slot, one per ANNOTATIONS entry
	X           [NumExtra]Nested // the appended columns (extra.go), by X* index
}

// derivations lists, per derived property, its node labels (as Kubecost spells them) by
// preference. They take the first Record.Labels slots, in this order.
var derivations = [...]struct {
	prop    int
	sources []string
}{
	{PropNodeInstanceType, []string{"node_kubernetes_io_instance_type"}},
	{PropRegion, []string{"topology_kubernetes_io_region"}},
	{PropNodeAvailabilityZone, []string{"topology_kubernetes_io_zone"}},
	{PropNodeArchitecture, []string{"kubernetes_io_arch"}},
	{PropNodeOS, []string{"kubernetes_io_os"}},
	{PropNodeCapacityType, []string{"eks_amazonaws_com_capacityType", "karpenter_sh_capacity_type"}},
	{PropNodeNodegroup, []string{"eks_amazonaws_com_nodegroup", "karpenter_sh_nodepool", "karpenter_sh_provisioner_name"}},
	{PropNodeNodegroupImage, []string{"eks_amazonaws_com_nodegroup_image", "karpenter_k8s_aws_instance_ami_id"}},
}

// Projection maps Kubecost's sanitized label and annotation keys to record slots and derives
// the computed properties. It is immutable and safe for concurrent use.
type Projection struct {
	clusterID, clusterName string
	labels, annotations    []string       // original keys, column order
	labelSlot              map[string]int // sanitized key -> Record.Labels slot
	userLabelSlots         []int          // per LABELS entry
	annotationSlot         map[string]int
	userAnnotationSlots    []int
}

// NewProjection builds one cluster's projection from the original LABELS/ANNOTATIONS keys.
func NewProjection(clusterID, clusterName string, labels, annotations []string) *Projection {
	p := &Projection{
		clusterID:      clusterID,
		clusterName:    clusterName,
		labels:         append([]string(nil), labels...),
		annotations:    append([]string(nil), annotations...),
		labelSlot:      map[string]int{},
		annotationSlot: map[string]int{},
	}
	for _, d := range derivations {
		for _, k := range d.sources {
			slotFor(p.labelSlot, k)
		}
	}
	for _, l := range labels {
		p.userLabelSlots = append(p.userLabelSlots, slotFor(p.labelSlot, Sanitize(l)))
	}
	for _, a := range annotations {
		p.userAnnotationSlots = append(p.userAnnotationSlots, slotFor(p.annotationSlot, Sanitize(a)))
	}
	return p
}

// slotFor returns key's slot, allocating one for a new key. Keys that sanitize alike (a.b,
// a/b) share a slot: Kubecost cannot tell them apart either.
func slotFor(m map[string]int, key string) int {
	s, ok := m[key]
	if !ok {
		s = len(m) // slots are numbered as the keys come
		m[key] = s
	}
	return s
}

// Columns returns the Parquet columns of this projection.
func (p *Projection) Columns() []Column { return Columns(p.labels, p.annotations) }

// Labels returns the original LABELS keys.
func (p *Projection) Labels() []string { return append([]string(nil), p.labels...) }

// Annotations returns the original ANNOTATIONS keys.
func (p *Projection) Annotations() []string { return append([]string(nil), p.annotations...) }

// NewRecord returns a record with its slots allocated.
func (p *Projection) NewRecord() *Record {
	return &Record{
		Labels:      make([]string, len(p.labelSlot)),
		Annotations: make([]string, len(p.annotationSlot)),
	}
}

// LabelSlot returns the Record.Labels slot of a sanitized label key, or -1 when not needed.
// Callers may pass string(b) for a []byte b: a map lookup does not allocate.
func (p *Projection) LabelSlot(key string) int { return slotOf(p.labelSlot, key) }

// AnnotationSlot is LabelSlot for annotations.
func (p *Projection) AnnotationSlot(key string) int { return slotOf(p.annotationSlot, key) }

func slotOf(m map[string]int, key string) int {
	if s, ok := m[key]; ok {
		return s
	}
	return -1
}

// UserLabel returns the value of the i-th LABELS column.
func (p *Projection) UserLabel(r *Record, i int) string { return r.Labels[p.userLabelSlots[i]] }

// UserAnnotation returns the value of the i-th ANNOTATIONS column.
func (p *Projection) UserAnnotation(r *Record, i int) string {
	return r.Annotations[p.userAnnotationSlots[i]]
}

// Reset clears r for the next allocation, keeping its slot storage.
func (p *Projection) Reset(r *Record) {
	// Field by field: copying the large X whole would cost more than the rest.
	r.Name, r.Start, r.End = "", 0, 0
	r.Num = [NumDoubles]float64{}
	r.Props = [NumProps]string{}
	clear(r.Labels)
	clear(r.Annotations)
	for i := range r.X {
		r.X[i].reset()
	}
}

// Finish derives the computed properties and cleans the numbers: NaN and infinities become
// 0 (CONTRACT §4), and -0 becomes 0 so no sign bit surprises sums and equality checks.
func (p *Projection) Finish(r *Record) {
	for i, v := range r.Num {
		_, r.Num[i] = Finite(v)
	}
	// In the nullable appended columns, a number Kubecost could not compute is null, not 0.
	for i := range r.X {
		if x := &r.X[i]; extras[i].Type == NullableDouble && x.Set {
			x.Set, x.Num = Finite(x.Num)
		}
	}
	r.Props[PropClusterID] = p.clusterID
	r.Props[PropEKSClusterName] = p.clusterName
	slot := 0 // of the first source of d
	for _, d := range derivations {
		r.Props[d.prop] = ""
		for i := range d.sources {
			if v := r.Labels[slot+i]; v != "" && r.Props[d.prop] == "" {
				r.Props[d.prop] = v
			}
		}
		slot += len(d.sources)
	}
	r.Props[PropProvider] = ""
	if id := r.Props[PropProviderID]; strings.HasPrefix(id, "i-") || strings.HasPrefix(id, "aws://") {
		r.Props[PropProvider] = "AWS"
	}
}

// Finite reports whether v is a number, with -0 made 0; package kubecost's decoders call it
// too, so NaN and -0 mean one thing.
func Finite(v float64) (bool, float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false, 0
	}
	if v == 0 {
		return true, 0
	}
	return true, v
}
