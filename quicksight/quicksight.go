// Package quicksight holds the QuickSight dashboard definition of
// kubecost-s3-exporter (dashboard-definition.json, QuickSight API JSON) and
// renders it for a set of label columns, exactly as the Terraform
// quicksight module does (a test in terraform/ compares the two).
package quicksight

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// DefinitionJSON is dashboard-definition.json as committed, with its
// placeholders.
//
//go:embed dashboard-definition.json
var DefinitionJSON []byte

// Placeholders in DefinitionJSON. Each is a whole JSON string, replaced
// with its quotes.
const (
	LabelValueExpression = `"__LABEL_VALUE_EXPRESSION__"`
	LabelKeys            = `"__LABEL_KEYS__"`
	DefaultLabelKey      = `"__DEFAULT_LABEL_KEY__"`
)

// LabelPrefix starts the name of every label column of the view.
const LabelPrefix = schema.LabelPrefix

// NoLabel is the only choice of the label control when no label is exported.
const NoLabel = "(none)"

// LabelExpression is the QuickSight expression of the label_value
// calculated field: the value of the label column that the LabelKey
// parameter names.
func LabelExpression(labelKeys []string) string {
	if len(labelKeys) == 0 {
		return "toString('')"
	}
	parts := make([]string, len(labelKeys))
	for i, k := range labelKeys {
		parts[i] = fmt.Sprintf("${LabelKey} = '%s', {%s%s}", k, LabelPrefix, k)
	}
	return fmt.Sprintf("ifelse(%s, '')", strings.Join(parts, ", "))
}

// Render returns the definition text for the given label keys (the
// lowercase suffixes of the view's properties.labels.* columns).
func Render(labelKeys []string) ([]byte, error) {
	choices := labelKeys
	if len(choices) == 0 {
		choices = []string{NoLabel}
	}
	quoted := make([]string, len(choices))
	for i, c := range choices {
		quoted[i] = jsonString(c)
	}
	out := DefinitionJSON
	for _, r := range []struct{ old, new string }{
		{LabelValueExpression, jsonString(LabelExpression(labelKeys))},
		{LabelKeys, strings.Join(quoted, ", ")},
		{DefaultLabelKey, quoted[0]},
	} {
		if bytes.Count(out, []byte(r.old)) == 0 {
			return nil, fmt.Errorf("quicksight: placeholder %s missing from the definition", r.old)
		}
		out = bytes.ReplaceAll(out, []byte(r.old), []byte(r.new))
	}
	if !json.Valid(out) {
		return nil, fmt.Errorf("quicksight: rendered definition is not valid JSON")
	}
	return out, nil
}

// jsonString encodes s as Terraform's jsonencode does (HTML characters
// escaped, like encoding/json).
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// BillDefinitionJSON is bill-definition.json: the "Bill vs Kubecost"
// dashboard over the bill module's namespace_daily view (issue 43). It has
// no placeholders; the Terraform quicksight module only sets its dataset's
// ARN.
//
//go:embed bill-definition.json
var BillDefinitionJSON []byte

// DatasetIdentifier returns the identifier that the definition's fields
// use for the dataset.
func DatasetIdentifier() (string, error) { return datasetIdentifier(DefinitionJSON) }

// BillDatasetIdentifier is DatasetIdentifier of the bill definition.
func BillDatasetIdentifier() (string, error) { return datasetIdentifier(BillDefinitionJSON) }

func datasetIdentifier(def []byte) (string, error) {
	var d struct {
		DataSetIdentifierDeclarations []struct{ Identifier string }
	}
	if err := json.Unmarshal(def, &d); err != nil {
		return "", err
	}
	if len(d.DataSetIdentifierDeclarations) != 1 {
		return "", fmt.Errorf("quicksight: the definition must declare exactly one dataset")
	}
	return d.DataSetIdentifierDeclarations[0].Identifier, nil
}
