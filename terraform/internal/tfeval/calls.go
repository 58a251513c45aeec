package tfeval

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Call evaluates the module block name of s: its arguments, evaluated in
// s (as its first instance when it has count), are the child module's
// variables; refs are the child's resources and data sources, as in
// Inputs. Only local sources (./ or ../) are loaded.
func (s *Scope) Call(name string, refs map[string]cty.Value) (*Scope, error) {
	b := s.M.Find("module", name)
	if b == nil {
		return nil, fmt.Errorf("tfeval: no module %q in %s", name, s.M.Dir)
	}
	child, err := s.M.child(b)
	if err != nil {
		return nil, err
	}
	vars := map[string]cty.Value{}
	for n, a := range b.Body.Attributes {
		switch n {
		case "source", "version", "count", "for_each", "providers", "depends_on":
			continue
		}
		v, err := s.Eval(a.Expr)
		if err != nil {
			return nil, fmt.Errorf("tfeval: module.%s.%s: %w", name, n, err)
		}
		vars[n] = v
	}
	cs, err := child.Evaluate(Inputs{Vars: vars, Refs: refs})
	if err != nil {
		return nil, fmt.Errorf("tfeval: module.%s: %w", name, err)
	}
	return cs, nil
}

// child loads the local module a module block calls.
func (m *Module) child(b *Block) (*Module, error) {
	a, ok := b.Body.Attributes["source"]
	if !ok {
		return nil, fmt.Errorf("tfeval: module.%s has no source", b.Name())
	}
	src, ok := a.Expr.(*hclsyntax.TemplateExpr)
	if !ok || !src.IsStringLiteral() {
		return nil, fmt.Errorf("tfeval: module.%s: source is not a string literal", b.Name())
	}
	v, _ := src.Value(nil)
	dir := v.AsString()
	if !strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../") {
		return nil, fmt.Errorf("tfeval: module.%s: %q is not a local module", b.Name(), dir)
	}
	return Load(filepath.Join(m.Dir, dir))
}

// Move is a moved block: state at From is taken over by To, both as
// written (e.g. aws_s3_bucket.data, module.bucket.aws_s3_bucket.this).
type Move struct{ From, To string }

// Addresses are the instance addresses of the managed resources a plan of
// s would hold, in the forms Terraform prints (aws_x.y, aws_x.y[0],
// aws_x.y["k"], module.m.aws_x.y), with local module calls expanded; and
// the moved blocks of s and of those modules, their addresses prefixed the
// same way. Counts and for_each must be known for the inputs of s.
func (s *Scope) Addresses() ([]string, []Move, error) {
	var addrs []string
	var moves []Move
	for _, b := range s.M.Blocks {
		switch b.Type {
		case "moved":
			moves = append(moves, Move{s.text(b, "from"), s.text(b, "to")})
		case "resource", "module":
			keys, err := s.instanceKeys(b)
			if err != nil {
				return nil, nil, err
			}
			if b.Type == "resource" {
				for _, k := range keys {
					addrs = append(addrs, b.Name()+k)
				}
				continue
			}
			child, err := s.Call(b.Labels[0], nil)
			if err != nil {
				return nil, nil, err
			}
			ca, cm, err := child.Addresses()
			if err != nil {
				return nil, nil, err
			}
			for _, k := range keys {
				prefix := "module." + b.Labels[0] + k + "."
				for _, a := range ca {
					addrs = append(addrs, prefix+a)
				}
				for _, mv := range cm {
					moves = append(moves, Move{prefix + mv.From, prefix + mv.To})
				}
			}
		}
	}
	sort.Strings(addrs)
	return addrs, moves, nil
}

// text is an attribute's source text without spaces.
func (s *Scope) text(b *Block, name string) string {
	a, ok := b.Body.Attributes[name]
	if !ok {
		return ""
	}
	return strings.Join(strings.Fields(s.M.Source(a.Expr.Range())), "")
}

// instanceKeys are a block's instance keys: "" without count or for_each,
// [0]... with count, ["k"]... with for_each.
func (s *Scope) instanceKeys(b *Block) ([]string, error) {
	if fe, ok := b.Body.Attributes["for_each"]; ok {
		v, err := s.Eval(fe.Expr)
		if err != nil {
			return nil, fmt.Errorf("tfeval: %s for_each: %w", b.Name(), err)
		}
		if !v.IsWhollyKnown() || v.IsNull() {
			return nil, fmt.Errorf("tfeval: %s: for_each is not known", b.Name())
		}
		var keys []string
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			if v.Type().IsSetType() {
				k = e
			}
			keys = append(keys, fmt.Sprintf("[%q]", k.AsString()))
		}
		sort.Strings(keys)
		return keys, nil
	}
	if _, ok := b.Body.Attributes["count"]; !ok {
		return []string{""}, nil
	}
	n, err := s.Count(b)
	if err != nil {
		return nil, err
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("[%d]", i)
	}
	return keys, nil
}
