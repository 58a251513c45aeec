// Package schema is the single source of truth for the Parquet column contract (CONTRACT
// §4): the writer, the Terraform Glue table and the QuickSight dataset derive from Columns.
package schema

import (
	"fmt"
	"slices"
	"strings"
)

// Version is bumped whenever a column is appended; existing columns never change name,
// type or meaning (Athena matches by name). Version 2 appended extra.go's columns.
const Version = "2"

// Type is the logical type of a column.
type Type int

// The column types. From NullableDouble on they are only used by the appended columns
// (extra.go) and are nullable: null when Kubecost omits the field.
const (
	// String is a UTF8 BYTE_ARRAY; "" when Kubecost omits the value.
	String Type = iota
	// Double is a DOUBLE; 0 when missing, null or NaN.
	Double
	// Timestamp is an INT64 TIMESTAMP(MILLIS, isAdjustedToUTC=true).
	Timestamp
	// NullableDouble is an optional DOUBLE.
	NullableDouble
	// NullableString is an optional UTF8 string; only inside a Struct.
	NullableString
	// Bool is an optional BOOLEAN; only inside a Struct.
	Bool
	// StringMap is an optional MAP<STRING,STRING>.
	StringMap
	// StringList is an optional LIST<STRING>.
	StringList
	// Struct is an optional group of Column.Fields.
	Struct
	// StructMap is an optional MAP<STRING, group of Column.Fields>.
	StructMap
)

// typeNames are each type's own name (Type.String) and Glue, Presto and QuickSight types.
// A struct's Glue and Presto types list its fields (Column.Glue); QuickSight cannot read
// maps, lists and structs ("").
var typeNames = [...]struct{ name, glue, presto, quickSight string }{
	String:         {"string", "string", "varchar", "STRING"},
	Double:         {"double", "double", "double", "DECIMAL"},
	Timestamp:      {"timestamp", "timestamp", "timestamp(3)", "DATETIME"},
	NullableDouble: {"nullable_double", "double", "double", "DECIMAL"},
	NullableString: {"nullable_string", "string", "varchar", "STRING"},
	Bool:           {"boolean", "boolean", "boolean", "BOOLEAN"},
	StringMap:      {"map", "map<string,string>", "map(varchar, varchar)", ""},
	StringList:     {"list", "array<string>", "array(varchar)", ""},
	Struct:         {name: "struct"},
	StructMap:      {name: "map_of_struct"},
}

func (t Type) String() string {
	if t >= 0 && int(t) < len(typeNames) {
		return typeNames[t].name
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// Nested reports whether values of t are maps, lists or structs.
func (t Type) Nested() bool { return t >= StringMap }

// Column is one Parquet column. Fields are the members of a Struct or a StructMap's values.
type Column struct {
	Name   string
	Type   Type
	Fields []Column
}

// Glue is the Glue/Hive type name of a Glue table definition.
func (c Column) Glue() string {
	switch c.Type {
	case Struct:
		return c.fieldList("struct<", ":", ",", ">", Column.Glue)
	case StructMap:
		return "map<string," + c.fieldList("struct<", ":", ",", ">", Column.Glue) + ">"
	}
	return typeNames[c.Type].glue
}

// Presto is the Athena (Trino) SQL type name.
func (c Column) Presto() string {
	switch c.Type {
	case Struct:
		return c.fieldList("row(", " ", ", ", ")", Column.Presto)
	case StructMap:
		return "map(varchar, " + c.fieldList("row(", " ", ", ", ")", Column.Presto) + ")"
	}
	return typeNames[c.Type].presto
}

// fieldList renders fields as open name<nameSep>type<sep>... close (struct<>, row()).
func (c Column) fieldList(open, nameSep, sep, close string, typeOf func(Column) string) string {
	var b strings.Builder
	b.WriteString(open)
	for i, f := range c.Fields {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(f.Name + nameSep + typeOf(f))
	}
	b.WriteString(close)
	return b.String()
}

// QuickSight is the input column type of a QuickSight Athena source, or "" for maps, lists
// and structs: the QuickSight dataset leaves them to Athena.
func (c Column) QuickSight() string { return typeNames[c.Type].quickSight }

// doubles are the numeric columns in contract order, named as a Kubecost allocation's JSON keys.
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
func DoubleIndex(name string) int { return slices.Index(doubles[:], name) }

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

// kubecostProps maps the verbatim Kubecost `properties` keys to Record.Props; others are derived.
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
	cols := []Column{{Name: "name", Type: String}, {Name: "window.start", Type: Timestamp}, {Name: "window.end", Type: Timestamp}}
	for _, d := range doubles {
		cols = append(cols, Column{Name: d, Type: Double})
	}
	for _, p := range props {
		cols = append(cols, Column{Name: "properties." + p, Type: String})
	}
	return cols
}

// Columns returns every column for the LABELS/ANNOTATIONS keys as the user wrote them, in
// order: the base, LABELS, ANNOTATIONS, then the appended columns.
func Columns(labels, annotations []string) []Column {
	cols := CCA(labels, annotations)
	for _, e := range Extras() {
		cols = append(cols, e.Column)
	}
	return cols
}

// CCA returns the columns of schema version 1, which the CCA Glue table reads.
func CCA(labels, annotations []string) []Column {
	cols := Base()
	for _, l := range labels {
		cols = append(cols, Column{Name: LabelPrefix + l, Type: String})
	}
	for _, a := range annotations {
		cols = append(cols, Column{Name: AnnotationPrefix + a, Type: String})
	}
	return cols
}

// Sanitize returns a key as Kubecost reports it: every byte outside [a-zA-Z0-9_] becomes '_'.
func Sanitize(key string) string {
	b := []byte(key)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}
