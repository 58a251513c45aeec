package schema

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// partitionKeys are the Hive partitions (CONTRACT §3), strings as month is zero-padded ("03").
func partitionKeys() []string { return []string{"account_id", "region", "year", "month"} }

// Described is the contract `kubecost-s3-exporter schema --format json` prints; Terraform
// and QuickSight column lists are generated from it.
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
	// QuickSight is "" for maps, lists and structs.
	QuickSight string `json:"quicksight"`
	// AfterLabels marks the version 2 columns, after the LABELS and ANNOTATIONS columns that
	// vary with the config: generators insert those before the first one.
	AfterLabels bool   `json:"after_labels,omitempty"`
	Source      string `json:"source,omitempty"` // an appended column's Kubecost field
}

// Describe returns the contract for the given LABELS and ANNOTATIONS keys.
func Describe(labels, annotations []string) Described {
	d := Described{SchemaVersion: Version}
	for _, c := range CCA(labels, annotations) {
		d.Columns = append(d.Columns, describe(c))
	}
	for _, e := range Extras() {
		dc := describe(e.Column)
		dc.AfterLabels, dc.Source = true, e.Name
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

// Write prints d as "json" (indented, stable) or "text" (a table, one column a row).
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
		return d.writeText(w)
	}
	return fmt.Errorf("schema: unknown format %q (accepted: json, text)", format)
}

// maxTypeWidth is the widest type the text table shows in its cell (map(varchar, varchar)).
const maxTypeWidth = 24

// writeText prints an aligned table. A nested type can be a hundred characters long and
// would misalign every row: its row shows the kind, its full types follow below the table.
func (d Described) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "COLUMN\tGLUE\tPRESTO\tQUICKSIGHT\n")
	var nested []DescribedColumn
	for _, c := range d.Columns {
		qs := cmp.Or(c.QuickSight, "-")
		glue, presto := c.Glue, c.Presto
		if len(glue) > maxTypeWidth || len(presto) > maxTypeWidth {
			glue, presto = kind(glue)+" (below)", kind(presto)+" (below)"
			nested = append(nested, c)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, glue, presto, qs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(nested) > 0 {
		fmt.Fprintf(w, "\nNested column types:\n")
	}
	for _, c := range nested {
		fmt.Fprintf(w, "  %s\n    glue:   %s\n    presto: %s\n", c.Name, c.Glue, c.Presto)
	}
	return nil
}

// kind is a nested type's outer word: struct, map, array, row.
func kind(t string) string {
	if i := strings.IndexAny(t, "<("); i > 0 {
		return t[:i]
	}
	return t
}
