package gen

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

const (
	docsBegin = "<!-- BEGIN_TF_DOCS -->"
	docsEnd   = "<!-- END_TF_DOCS -->"
	docsNote  = "<!-- Generated from the Terraform code by `make generate`; do not edit between these markers. -->"
)

// README returns dir/README.md with the requirements, modules, resources,
// inputs and outputs tables between the TF_DOCS markers rendered from the
// Terraform code; the text around the markers is kept.
func README(dir string) ([]byte, error) {
	path := filepath.Join(dir, "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := string(b)
	i, j := strings.Index(text, docsBegin), strings.Index(text, docsEnd)
	if i < 0 || j < i {
		return nil, fmt.Errorf("%s lacks the %s ... %s markers", path, docsBegin, docsEnd)
	}
	m, err := tfeval.Load(dir)
	if err != nil {
		return nil, err
	}
	tables, err := docsTables(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return []byte(text[:i] + docsBegin + "\n" + docsNote + "\n" + tables + text[j:]), nil
}

// cell is one line of Markdown text: | < > * escaped.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "<", `\<`, ">", `\>`, "*", `\*`).Replace(strings.Join(strings.Fields(s), " "))
}

// code is one line of code in a table cell.
func code(s string) string {
	return "`" + strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`) + "`"
}

func docsTables(m *tfeval.Module) (string, error) {
	var b strings.Builder
	row := func(cells ...string) { fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | ")) }

	b.WriteString("## Requirements\n\n| Name | Version |\n|------|---------|\n")
	for _, tb := range m.Of("terraform") {
		if a, ok := tb.Body.Attributes["required_version"]; ok {
			v, _ := a.Expr.Value(nil)
			row("terraform", code(v.AsString()))
		}
		for _, rp := range tb.Body.Blocks {
			if rp.Type != "required_providers" {
				continue
			}
			for _, name := range sortedKeys(rp.Body.Attributes) {
				for _, item := range rp.Body.Attributes[name].Expr.(*hclsyntax.ObjectConsExpr).Items {
					if hcl.ExprAsKeyword(item.KeyExpr) == "version" {
						v, _ := item.ValueExpr.Value(nil)
						row(name, code(v.AsString()))
					}
				}
			}
		}
	}

	if mods := m.Of("module"); len(mods) > 0 {
		b.WriteString("\n## Modules\n\n| Name | Source |\n|------|--------|\n")
		for _, mb := range mods {
			v, _ := mb.Body.Attributes["source"].Expr.Value(nil)
			row(mb.Labels[0], code(v.AsString()))
		}
	}

	var res []string
	for _, rb := range m.Blocks {
		switch rb.Type {
		case "resource":
			res = append(res, code(rb.Name())+" | resource")
		case "data":
			res = append(res, code(rb.Name())+" | data source")
		}
	}
	if len(res) > 0 {
		sort.Strings(res)
		b.WriteString("\n## Resources\n\n| Name | Type |\n|------|------|\n")
		for _, r := range res {
			row(r)
		}
	}

	vs, err := m.Variables()
	if err != nil {
		return "", err
	}
	sort.SliceStable(vs, func(i, j int) bool {
		if (vs[i].Default == nil) != (vs[j].Default == nil) {
			return vs[i].Default == nil
		}
		return vs[i].Name < vs[j].Name
	})
	b.WriteString("\n## Inputs\n\n| Name | Description | Type | Default | Required |\n|------|-------------|------|---------|:--------:|\n")
	for _, v := range vs {
		typ := m.Source(v.Block.Body.Attributes["type"].Expr.Range())
		def, req := "n/a", "yes"
		if a, ok := v.Block.Body.Attributes["default"]; ok {
			def, req = code(m.Source(a.Expr.Range())), "no"
		}
		row(code(v.Name), cell(v.Description), code(typ), def, req)
	}

	if outs := m.Of("output"); len(outs) > 0 {
		b.WriteString("\n## Outputs\n\n| Name | Description |\n|------|-------------|\n")
		sort.Slice(outs, func(i, j int) bool { return outs[i].Labels[0] < outs[j].Labels[0] })
		for _, o := range outs {
			d, _ := o.Body.Attributes["description"].Expr.Value(nil)
			row(code(o.Labels[0]), cell(d.AsString()))
		}
	}
	return b.String(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
