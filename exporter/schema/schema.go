// Package schema is the single source of truth for the Parquet column
// contract (CONTRACT §4). The writer, the Terraform Glue table and the
// QuickSight dataset are all derived from Columns, so they cannot drift.
package schema

import (
	"fmt"
	"strings"
)

// Version is bumped whenever a column is appended. Existing columns never
// change name, type or meaning; Athena matches columns by name.
const Version = "1"

// Type is the logical type of a column.
type Type int

const (
	// String is a UTF8 BYTE_ARRAY; "" when Kubecost omits the value.
	String Type = iota
	// Double is a DOUBLE; 0 when missing, null or NaN.
	Double
	// Timestamp is an INT64 TIMESTAMP(MILLIS, isAdjustedToUTC=true).
	Timestamp
)

func (t Type) String() string {
	switch t {
	case String:
		return "string"
	case Double:
		return "double"
	case Timestamp:
		return "timestamp"
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// Glue is the Glue/Hive type name, as used in a Glue table definition.
func (t Type) Glue() string {
	switch t {
	case Double:
		return "double"
	case Timestamp:
		return "timestamp"
	}
	return "string"
}

// Presto is the Athena (Trino) SQL type name.
func (t Type) Presto() string {
	switch t {
	case Double:
		return "double"
	case Timestamp:
		return "timestamp(3)"
	}
	return "varchar"
}

// QuickSight is the QuickSight input column type for an Athena source.
func (t Type) QuickSight() string {
	switch t {
	case Double:
		return "DECIMAL"
	case Timestamp:
		return "DATETIME"
	}
	return "STRING"
}

// Column is one Parquet column.
type Column struct {
	Name string
	Type Type
}

// Doubles are the numeric columns, in contract order. Their names are also
// the JSON keys of a Kubecost allocation.
var doubles = [...]string{
	"minutes",
	"cpuCores", "cpuCoreRequestAverage", "cpuCoreUsageAverage", "cpuCoreHours", "cpuCost", "cpuCostAdjustment", "cpuEfficiency",
	"gpuCount", "gpuHours", "gpuCost", "gpuCostAdjustment",
	"networkTransferBytes", "networkReceiveBytes", "networkCost", "networkCrossZoneCost", "networkCrossRegionCost", "networkInternetCost", "networkCostAdjustment",
	"loadBalancerCost", "loadBalancerCostAdjustment",
	"pvBytes", "pvByteHours", "pvCost", "pvCostAdjustment",
	"ramBytes", "ramByteRequestAverage", "ramByteUsageAverage", "ramByteHours", "ramCost", "ramCostAdjustment", "ramEfficiency",
	"sharedCost", "externalCost", "totalCost", "totalEfficiency",
}

// NumDoubles is the number of numeric columns.
const NumDoubles = len(doubles)

// DoubleNames returns the numeric column names (= Kubecost JSON keys) in order.
func DoubleNames() []string { return append([]string(nil), doubles[:]...) }

// DoubleIndex returns the position of a numeric Kubecost field, or -1.
func DoubleIndex(name string) int {
	for i, d := range doubles {
		if d == name {
			return i
		}
	}
	return -1
}

// Property indexes into Record.Props, in contract order.
const (
	PropProvider = iota
	PropRegion
	PropCluster
	PropClusterID
	PropEKSClusterName
	PropContainer
	PropNamespace
	PropPod
	PropNode
	PropNodeInstanceType
	PropNodeAvailabilityZone
	PropNodeCapacityType
	PropNodeArchitecture
	PropNodeOS
	PropNodeNodegroup
	PropNodeNodegroupImage
	PropController
	PropControllerKind
	PropProviderID
	NumProps
)

var props = [NumProps]string{
	"provider", "region", "cluster", "clusterid", "eksClusterName",
	"container", "namespace", "pod", "node",
	"node_instance_type", "node_availability_zone", "node_capacity_type",
	"node_architecture", "node_os", "node_nodegroup", "node_nodegroup_image",
	"controller", "controllerKind", "providerID",
}

// PropName returns the suffix after "properties." of property i.
func PropName(i int) string { return props[i] }

// KubecostProps maps the Kubecost `properties` keys that are copied verbatim
// to their Record.Props index. The other properties are derived.
var kubecostProps = map[string]int{
	"cluster":        PropCluster,
	"container":      PropContainer,
	"namespace":      PropNamespace,
	"pod":            PropPod,
	"node":           PropNode,
	"controller":     PropController,
	"controllerKind": PropControllerKind,
	"providerID":     PropProviderID,
}

// KubecostPropIndex returns the Props index of a verbatim Kubecost property.
func KubecostPropIndex(key string) (int, bool) {
	i, ok := kubecostProps[key]
	return i, ok
}

// Base returns the fixed contract columns, in order.
func Base() []Column {
	cols := make([]Column, 0, 3+NumDoubles+NumProps)
	cols = append(cols,
		Column{"name", String},
		Column{"window.start", Timestamp},
		Column{"window.end", Timestamp},
	)
	for _, d := range doubles {
		cols = append(cols, Column{d, Double})
	}
	for _, p := range props {
		cols = append(cols, Column{"properties." + p, String})
	}
	return cols
}

// Columns returns every column for the given original label and annotation
// keys (as the user wrote them in LABELS/ANNOTATIONS), in order.
func Columns(labels, annotations []string) []Column {
	cols := Base()
	for _, l := range labels {
		cols = append(cols, Column{"properties.labels." + l, String})
	}
	for _, a := range annotations {
		cols = append(cols, Column{"properties.annotations." + a, String})
	}
	return cols
}

// Sanitize returns a Kubernetes label or annotation key as Kubecost reports
// it: every character outside [a-zA-Z0-9_] becomes '_'.
func Sanitize(key string) string {
	var b strings.Builder
	b.Grow(len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
