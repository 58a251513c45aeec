package schema

import (
	"math"
	"strings"
)

// Record is one allocation row. A decoder fills the verbatim fields and the
// label slots, then Projection.Finish derives the rest. Records are reused
// between allocations, so consumers copy what they keep.
type Record struct {
	Name       string
	Start, End int64 // Unix milliseconds, UTC
	Num        [NumDoubles]float64
	Props      [NumProps]string
	// Labels holds Kubecost label values by slot (see Projection.LabelSlot):
	// the node labels that feed derived properties first, then LABELS.
	Labels []string
	// Annotations holds one value per ANNOTATIONS entry, by slot.
	Annotations []string
	// X holds the appended columns (extra.go), by X* index.
	X [NumExtra]Nested
}

// Node labels that feed derived properties, as Kubecost spells them.
// Order matters: derivations below refer to these positions.
var derivedSources = [...]string{
	"node_kubernetes_io_instance_type",  // 0
	"topology_kubernetes_io_region",     // 1
	"topology_kubernetes_io_zone",       // 2
	"kubernetes_io_arch",                // 3
	"kubernetes_io_os",                  // 4
	"eks_amazonaws_com_capacityType",    // 5
	"karpenter_sh_capacity_type",        // 6
	"eks_amazonaws_com_nodegroup",       // 7
	"karpenter_sh_nodepool",             // 8
	"karpenter_sh_provisioner_name",     // 9
	"eks_amazonaws_com_nodegroup_image", // 10
	"karpenter_k8s_aws_instance_ami_id", // 11
}

// derivations lists, per derived property, its source slots by preference.
var derivations = [...]struct {
	prop    int
	sources []int
}{
	{PropNodeInstanceType, []int{0}},
	{PropRegion, []int{1}},
	{PropNodeAvailabilityZone, []int{2}},
	{PropNodeArchitecture, []int{3}},
	{PropNodeOS, []int{4}},
	{PropNodeCapacityType, []int{5, 6}},
	{PropNodeNodegroup, []int{7, 8, 9}},
	{PropNodeNodegroupImage, []int{10, 11}},
}

// Projection maps Kubecost's sanitized label and annotation keys to record
// slots and derives the computed properties. It is immutable once built and
// safe for concurrent use.
type Projection struct {
	clusterID, clusterName string
	labels, annotations    []string       // original keys, column order
	labelSlot              map[string]int // sanitized key -> Record.Labels slot
	userLabelSlots         []int          // per LABELS entry
	annotationSlot         map[string]int
	userAnnotationSlots    []int
	nLabelSlots            int
	nAnnotationSlots       int
}

// NewProjection builds the projection for one cluster. labels and
// annotations are the original Kubernetes keys from LABELS/ANNOTATIONS.
func NewProjection(clusterID, clusterName string, labels, annotations []string) *Projection {
	p := &Projection{
		clusterID:      clusterID,
		clusterName:    clusterName,
		labels:         append([]string(nil), labels...),
		annotations:    append([]string(nil), annotations...),
		labelSlot:      make(map[string]int, len(derivedSources)+len(labels)),
		annotationSlot: make(map[string]int, len(annotations)),
	}
	for i, k := range derivedSources {
		p.labelSlot[k] = i
	}
	p.nLabelSlots = len(derivedSources)
	for _, l := range labels {
		p.userLabelSlots = append(p.userLabelSlots, slotFor(p.labelSlot, Sanitize(l), &p.nLabelSlots))
	}
	for _, a := range annotations {
		p.userAnnotationSlots = append(p.userAnnotationSlots, slotFor(p.annotationSlot, Sanitize(a), &p.nAnnotationSlots))
	}
	return p
}

// slotFor returns the slot of key, allocating one if it is new. Two user keys
// that sanitize alike (a.b and a/b) share a slot, because Kubecost cannot
// tell them apart either.
func slotFor(m map[string]int, key string, n *int) int {
	if s, ok := m[key]; ok {
		return s
	}
	m[key] = *n
	*n++
	return *n - 1
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
		Labels:      make([]string, p.nLabelSlots),
		Annotations: make([]string, p.nAnnotationSlots),
	}
}

// LabelSlot returns the Record.Labels slot of a sanitized Kubecost label
// key, or -1 when the key is not needed. Callers may pass string(b) for a
// []byte b: the compiler does not allocate for a map lookup.
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
	// Field by field: X is large, and copying it whole for every
	// allocation would cost more than the rest of the record.
	r.Name, r.Start, r.End = "", 0, 0
	r.Num = [NumDoubles]float64{}
	r.Props = [NumProps]string{}
	clear(r.Labels)
	clear(r.Annotations)
	for i := range r.X {
		r.X[i].reset()
	}
}

// Finish derives the computed properties and cleans the numbers: NaN and
// infinities become 0 (CONTRACT §4), and -0 becomes 0 so sums and equality
// checks downstream are not surprised by a sign bit.
func (p *Projection) Finish(r *Record) {
	for i, v := range r.Num {
		_, r.Num[i] = Finite(v)
	}
	// The appended columns are nullable: a number Kubecost could not
	// compute is null there, not 0.
	for i := range r.X {
		if x := &r.X[i]; extras[i].Type == NullableDouble && x.Set {
			x.Set, x.Num = Finite(x.Num)
		}
	}
	r.Props[PropClusterID] = p.clusterID
	r.Props[PropEKSClusterName] = p.clusterName
	for _, d := range derivations {
		r.Props[d.prop] = ""
		for _, s := range d.sources {
			if v := r.Labels[s]; v != "" {
				r.Props[d.prop] = v
				break
			}
		}
	}
	r.Props[PropProvider] = ""
	if id := r.Props[PropProviderID]; strings.HasPrefix(id, "i-") || strings.HasPrefix(id, "aws://") {
		r.Props[PropProvider] = "AWS"
	}
}

// Finite reports whether v is a number, with -0 made 0; Kubecost's
// decoders (package kubecost) call it too, so NaN and -0 mean one thing.
func Finite(v float64) (bool, float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false, 0
	}
	if v == 0 {
		return true, 0
	}
	return true, v
}
