package schema

// The prefixes of the LABELS and ANNOTATIONS columns (CONTRACT §4),
// followed by the original Kubernetes key: the one spelling that the
// schema, the Parquet writer, the report and the dashboards use.
const (
	LabelPrefix      = "properties.labels."
	AnnotationPrefix = "properties.annotations."
)

// Kubecost's names of the allocations that are no workload, as the last
// element of an allocation's name: "__idle__", "<cluster>/__idle__" or
// "<cluster>/<node>/__idle__" for idle cost, and the markers of the
// allocations without a namespace. They are OpenCost's IdleSuffix,
// SharedSuffix, UnmountedSuffix, UnallocatedSuffix and ExternalSuffix
// (opencost core/pkg/opencost/allocation.go). The Kubecost client and the
// report read them from here.
const (
	IdleName        = "__idle__"
	SharedName      = "__shared__"
	UnmountedName   = "__unmounted__"
	UnallocatedName = "__unallocated__"
	ExternalName    = "__external__"
)
