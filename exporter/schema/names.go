package schema

// The prefixes of the LABELS and ANNOTATIONS columns before the original key (CONTRACT §4),
// the one spelling for the schema, the writer, the report and the dashboards.
const (
	LabelPrefix      = "properties.labels."
	AnnotationPrefix = "properties.annotations."
)

// Kubecost's names of allocations that are no workload, as the last element of a name
// ("__idle__", "<cluster>/__idle__", "<cluster>/<node>/__idle__"; the markers of allocations
// without a namespace): OpenCost's IdleSuffix, SharedSuffix, UnmountedSuffix,
// UnallocatedSuffix and ExternalSuffix (opencost core/pkg/opencost/allocation.go).
const (
	IdleName        = "__idle__"
	SharedName      = "__shared__"
	UnmountedName   = "__unmounted__"
	UnallocatedName = "__unallocated__"
	ExternalName    = "__external__"
)
