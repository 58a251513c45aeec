package schema

import "slices"

// The columns appended in schema version 2, after LABELS and ANNOTATIONS: everything else
// Kubecost and OpenCost report, so nothing is lost when Kubecost's retention ends. They are
// nullable: null means Kubecost did not report the field, unlike 0 or "".

// Extra column indexes into Record.X, in column order.
const (
	XLabels = iota
	XAnnotations
	XCPUCostIdle
	XRAMCostIdle
	XGPUCostIdle
	XGPURequestAverage
	XGPUUsageAverage
	XGPUEfficiency
	XGPUAllocation
	XPVs
	XLBAllocations
	XServices
	XNamespaceLabels
	XNamespaceAnnotations
	XRawAllocationOnly
	NumExtra
)

// MaxFields bounds the fields of a struct column (Nested.Fields).
const MaxFields = 6

// ExtraColumn is an appended column, named by the field's path in a Kubecost allocation.
type ExtraColumn struct {
	Column
	Property bool   // a member of "properties", not of the allocation
	Key      string // the JSON member name the decoder looks for
}

// Struct fields are in byte order of name, as parquet-go writes a group's fields; the Glue
// and Athena struct types are generated from the same list, so they cannot disagree.
var (
	gpuAllocationFields = []Column{
		{"gpuDevice", NullableString, nil},
		{"gpuModel", NullableString, nil},
		{"gpuRequestAverage", NullableDouble, nil},
		{"gpuUUID", NullableString, nil},
		{"gpuUsageAverage", NullableDouble, nil},
		{"isGPUShared", Bool, nil},
	}
	pvFields = []Column{
		{"adjustment", NullableDouble, nil},
		{"byteHours", NullableDouble, nil},
		{"cost", NullableDouble, nil},
		{"providerID", NullableString, nil},
	}
	lbFields = []Column{
		{"adjustment", NullableDouble, nil},
		{"cost", NullableDouble, nil},
		{"hours", NullableDouble, nil},
		{"ip", NullableString, nil},
		{"private", Bool, nil},
		{"service", NullableString, nil},
	}
	rawFields = []Column{
		{"cpuCoreUsageMax", NullableDouble, nil},
		{"gpuUsageMax", NullableDouble, nil},
		{"ramByteUsageMax", NullableDouble, nil},
	}
)

var extras = [NumExtra]ExtraColumn{
	{Column{"properties.labels", StringMap, nil}, true, "labels"},
	{Column{"properties.annotations", StringMap, nil}, true, "annotations"},
	{Column{"cpuCostIdle", NullableDouble, nil}, false, "cpuCostIdle"},
	{Column{"ramCostIdle", NullableDouble, nil}, false, "ramCostIdle"},
	{Column{"gpuCostIdle", NullableDouble, nil}, false, "gpuCostIdle"},
	{Column{"gpuRequestAverage", NullableDouble, nil}, false, "gpuRequestAverage"},
	{Column{"gpuUsageAverage", NullableDouble, nil}, false, "gpuUsageAverage"},
	{Column{"gpuEfficiency", NullableDouble, nil}, false, "gpuEfficiency"},
	{Column{"gpuAllocation", Struct, gpuAllocationFields}, false, "gpuAllocation"},
	{Column{"pvs", StructMap, pvFields}, false, "pvs"},
	{Column{"lbAllocations", StructMap, lbFields}, false, "lbAllocations"},
	{Column{"properties.services", StringList, nil}, true, "services"},
	{Column{"properties.namespaceLabels", StringMap, nil}, true, "namespaceLabels"},
	{Column{"properties.namespaceAnnotations", StringMap, nil}, true, "namespaceAnnotations"},
	{Column{"rawAllocationOnly", Struct, rawFields}, false, "rawAllocationOnly"},
}

// Extras returns the appended columns with their sources, in order.
func Extras() []ExtraColumn {
	out := slices.Clone(extras[:])
	for i := range out {
		out[i].Fields = slices.Clone(out[i].Fields)
	}
	return out
}

// ExtraIndex returns the Record.X index of an appended column, or -1.
func ExtraIndex(name string) int {
	return slices.IndexFunc(extras[:], func(e ExtraColumn) bool { return e.Name == name })
}

// ExtraKey returns the Record.X index of an allocation's (or its properties') member, or -1.
func ExtraKey(key string, property bool) int {
	return slices.IndexFunc(extras[:], func(e ExtraColumn) bool { return e.Key == key && e.Property == property })
}

// KV is one entry of a string map.
type KV struct{ Key, Value string }

// Opt is a nullable scalar struct field; the field's type says whether Num, Str or B holds it.
type Opt struct {
	Num float64
	Str string
	B   bool
	Set bool
}

// Entry is one entry of a map of structs.
type Entry struct {
	Key    string
	Fields [MaxFields]Opt
}

// Nested holds one appended column's value for one row, in the member of its type, storage
// reused across rows. Set is false when Kubecost omitted the field or sent null.
type Nested struct {
	Set  bool
	Num  float64  // NullableDouble
	KV   []KV     // StringMap
	List []string // StringList
	// Entries holds a StructMap's entries, or a Struct's value in Entries[0] (Key unused):
	// struct fields are large and rare, so rows without them pay nothing.
	Entries []Entry
}

// reset clears n for the next row, keeping its slices' storage.
func (n *Nested) reset() {
	n.Set, n.Num = false, 0
	n.KV, n.List, n.Entries = n.KV[:0], n.List[:0], n.Entries[:0]
}

// copyFrom makes n a deep copy of o, reusing n's storage.
func (n *Nested) copyFrom(o *Nested) {
	n.Set, n.Num = o.Set, o.Num
	n.KV = append(n.KV[:0], o.KV...)
	n.List = append(n.List[:0], o.List...)
	n.Entries = append(n.Entries[:0], o.Entries...)
}

// CopyFrom makes r a deep copy of o, reusing r's storage, to keep a record the decoder reuses.
func (r *Record) CopyFrom(o *Record) {
	r.Name, r.Start, r.End, r.Num, r.Props = o.Name, o.Start, o.End, o.Num, o.Props
	r.Labels = append(r.Labels[:0], o.Labels...)
	r.Annotations = append(r.Annotations[:0], o.Annotations...)
	for i := range r.X {
		r.X[i].copyFrom(&o.X[i])
	}
}
