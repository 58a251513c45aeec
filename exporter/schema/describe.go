package schema

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// partitionKeys are the Hive partitions of the key layout (CONTRACT §3).
// They are strings because month is zero-padded ("03").
func partitionKeys() []string { return []string{"account_id", "region", "year", "month"} }

// Described is the machine-readable contract printed by
// `kubecost-s3-exporter schema --format json`; Terraform and QuickSight
// column lists are generated from it.
type Described struct {
	SchemaVersion string            `json:"schema_version"`
	Columns       []DescribedColumn `json:"columns"`
	PartitionKeys []DescribedColumn `json:"partition_keys"`
}

// DescribedColumn is one column with its type in every consumer's terms.
type DescribedColumn struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Glue   string `json:"glue"`
	Presto string `json:"presto"`
	// QuickSight is "" for maps, lists and structs, which the QuickSight
	// dataset leaves out.
	QuickSight string `json:"quicksight"`
	// AfterLabels marks the columns appended in schema version 2: they
	// come after the LABELS and ANNOTATIONS columns, whose number depends
	// on the configuration. Generators insert those before the first one.
	AfterLabels bool `json:"after_labels,omitempty"`
	// Source is the Kubecost field of an appended column.
	Source string `json:"source,omitempty"`
}

// Describe returns the contract for the given LABELS and ANNOTATIONS keys.
func Describe(labels, annotations []string) Described {
	d := Described{SchemaVersion: Version}
	for _, c := range CCA(labels, annotations) {
		d.Columns = append(d.Columns, describe(c))
	}
	for _, e := range Extras() {
		dc := describe(e.Column)
		dc.AfterLabels, dc.Source = true, e.Source
		d.Columns = append(d.Columns, dc)
	}
	for _, p := range partitionKeys() {
		d.PartitionKeys = append(d.PartitionKeys, describe(Column{Name: p, Type: String}))
	}
	return d
}

func describe(c Column) DescribedColumn {
	return DescribedColumn{Name: c.Name, Type: c.Type.String(), Glue: c.Glue(), Presto: c.Presto(), QuickSight: c.QuickSight()}
}

// Write prints d as "json" (indented, stable) or "text" (one column a line).
func (d Described) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "text":
		var b strings.Builder
		for _, c := range d.Columns {
			qs := c.QuickSight
			if qs == "" {
				qs = "-"
			}
			fmt.Fprintf(&b, "%-45s %-10s %-13s %s\n", c.Name, c.Glue, c.Presto, qs)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	return fmt.Errorf("schema: unknown format %q (accepted: json, text)", format)
}
