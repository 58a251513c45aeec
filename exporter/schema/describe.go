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
	Name       string `json:"name"`
	Type       string `json:"type"`
	Glue       string `json:"glue"`
	Presto     string `json:"presto"`
	QuickSight string `json:"quicksight"`
}

// Describe returns the contract for the given LABELS and ANNOTATIONS keys.
func Describe(labels, annotations []string) Described {
	d := Described{SchemaVersion: Version}
	for _, c := range Columns(labels, annotations) {
		d.Columns = append(d.Columns, describe(c))
	}
	for _, p := range partitionKeys() {
		d.PartitionKeys = append(d.PartitionKeys, describe(Column{p, String}))
	}
	return d
}

func describe(c Column) DescribedColumn {
	return DescribedColumn{Name: c.Name, Type: c.Type.String(), Glue: c.Type.Glue(), Presto: c.Type.Presto(), QuickSight: c.Type.QuickSight()}
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
			fmt.Fprintf(&b, "%-45s %-10s %-13s %s\n", c.Name, c.Glue, c.Presto, c.QuickSight)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	return fmt.Errorf("schema: unknown format %q (accepted: json, text)", format)
}
