// Package tfeval loads a Terraform module with hashicorp/hcl/v2 and
// evaluates its variables, locals and block attributes with enough of
// Terraform's semantics (its functions, dynamic blocks, count, optional
// object attributes) for tests to check what a module would send to AWS,
// without Terraform, providers or credentials.
//
// Resources and data sources are unknown values unless a test supplies
// them, so an expression that depends on something only AWS knows stays
// unknown instead of being guessed.
package tfeval

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Block is a top-level block of a module: variable, locals, resource, ...
type Block struct {
	Type   string
	Labels []string
	Body   *hclsyntax.Body
	File   string // base name
}

// Name is the block's labels joined with ".", e.g. "aws_iam_role.irsa".
func (b *Block) Name() string { return strings.Join(b.Labels, ".") }

// Module is the parsed *.tf files of one directory.
type Module struct {
	Dir    string
	Blocks []*Block
	Locals map[string]*hclsyntax.Attribute
	src    map[string][]byte // by file name
}

// Load parses every *.tf file of dir (not subdirectories).
func Load(dir string) (*Module, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	names, err := filepath.Glob(filepath.Join(abs, "*.tf"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("tfeval: no .tf files in %s", dir)
	}
	sort.Strings(names)
	m := &Module{Dir: abs, Locals: map[string]*hclsyntax.Attribute{}, src: map[string][]byte{}}
	p := hclparse.NewParser()
	for _, n := range names {
		f, diags := p.ParseHCLFile(n)
		if diags.HasErrors() {
			return nil, fmt.Errorf("tfeval: %s", diags.Error())
		}
		m.src[n] = f.Bytes
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			if b.Type == "locals" {
				for name, a := range b.Body.Attributes {
					if _, dup := m.Locals[name]; dup {
						return nil, fmt.Errorf("tfeval: local.%s defined twice", name)
					}
					m.Locals[name] = a
				}
			}
			m.Blocks = append(m.Blocks, &Block{Type: b.Type, Labels: b.Labels, Body: b.Body, File: filepath.Base(n)})
		}
	}
	return m, nil
}

// Of returns the top-level blocks of one type, in file order.
func (m *Module) Of(typ string) []*Block {
	var out []*Block
	for _, b := range m.Blocks {
		if b.Type == typ {
			out = append(out, b)
		}
	}
	return out
}

// Find returns the block of typ whose labels are labels, or nil.
func (m *Module) Find(typ string, labels ...string) *Block {
	for _, b := range m.Of(typ) {
		if strings.Join(b.Labels, ".") == strings.Join(labels, ".") {
			return b
		}
	}
	return nil
}

// Source returns the text of a range of the module's files.
func (m *Module) Source(r hcl.Range) string {
	b := m.src[r.Filename]
	if b == nil || r.End.Byte > len(b) {
		return ""
	}
	return string(b[r.Start.Byte:r.End.Byte])
}

// Variable is a declared input variable.
type Variable struct {
	Name        string
	Block       *Block
	Type        cty.Type
	Defaults    *typeexpr.Defaults
	HasType     bool
	Description string
	Default     *cty.Value // nil when required
}

// Variables returns the declared variables, in file order.
func (m *Module) Variables() ([]*Variable, error) {
	var out []*Variable
	for _, b := range m.Of("variable") {
		v := &Variable{Name: b.Labels[0], Block: b, Type: cty.DynamicPseudoType}
		if a, ok := b.Body.Attributes["type"]; ok {
			ty, defs, diags := typeexpr.TypeConstraintWithDefaults(a.Expr)
			if diags.HasErrors() {
				return nil, fmt.Errorf("variable %s: %s", v.Name, diags.Error())
			}
			v.Type, v.Defaults, v.HasType = ty, defs, true
		}
		if a, ok := b.Body.Attributes["description"]; ok {
			d, diags := a.Expr.Value(nil)
			if diags.HasErrors() || d.Type() != cty.String || d.IsNull() {
				return nil, fmt.Errorf("variable %s: description must be a literal string", v.Name)
			}
			v.Description = d.AsString()
		}
		if a, ok := b.Body.Attributes["default"]; ok {
			d, diags := a.Expr.Value(&hcl.EvalContext{Functions: Functions(m.Dir)})
			if diags.HasErrors() {
				return nil, fmt.Errorf("variable %s: default: %s", v.Name, diags.Error())
			}
			d, err := v.convert(d)
			if err != nil {
				return nil, fmt.Errorf("variable %s: default: %w", v.Name, err)
			}
			v.Default = &d
		}
		out = append(out, v)
	}
	return out, nil
}

// convert applies the type constraint and optional-attribute defaults, as
// Terraform does for a module input.
func (v *Variable) convert(val cty.Value) (cty.Value, error) {
	if val.IsNull() {
		return cty.NullVal(v.Type), nil
	}
	if v.Defaults != nil {
		val = v.Defaults.Apply(val)
	}
	return convert.Convert(val, v.Type)
}

// Inputs are the values a test gives a module.
type Inputs struct {
	// Vars are input variables; the others take their defaults.
	Vars map[string]cty.Value
	// Refs are known values of resources ("aws_iam_role.irsa") and data
	// sources ("data.aws_caller_identity.pipeline") and the outputs of
	// module calls ("module.table", an object); every other resource, data
	// source and call is unknown. A counted resource takes a tuple.
	Refs map[string]cty.Value
}

// Scope is a module evaluated for some inputs.
type Scope struct {
	M         *Module
	Vars      map[string]cty.Value
	Locals    map[string]cty.Value
	LocalErrs map[string]error
	Ctx       *hcl.EvalContext
}

// Evaluate checks and converts the inputs, applies defaults, and evaluates
// every local. A local that fails to evaluate is unknown and its error is
// kept in LocalErrs.
func (m *Module) Evaluate(in Inputs) (*Scope, error) {
	vars, err := m.Variables()
	if err != nil {
		return nil, err
	}
	s := &Scope{M: m, Vars: map[string]cty.Value{}, Locals: map[string]cty.Value{}, LocalErrs: map[string]error{}}
	declared := map[string]bool{}
	for _, v := range vars {
		declared[v.Name] = true
		val, given := in.Vars[v.Name]
		switch {
		case given:
			cv, err := v.convert(val)
			if err != nil {
				return nil, fmt.Errorf("var.%s: %w", v.Name, err)
			}
			if msgs, err := m.CheckVariable(v.Name, cv); err != nil {
				return nil, err
			} else if len(msgs) > 0 {
				return nil, fmt.Errorf("var.%s fails validation: %s", v.Name, strings.Join(msgs, "; "))
			}
			s.Vars[v.Name] = cv
		case v.Default != nil:
			s.Vars[v.Name] = *v.Default
		default:
			return nil, fmt.Errorf("var.%s is required", v.Name)
		}
	}
	for name := range in.Vars {
		if !declared[name] {
			return nil, fmt.Errorf("var.%s is not declared", name)
		}
	}

	s.Ctx = &hcl.EvalContext{Variables: m.rootVariables(in.Refs), Functions: Functions(m.Dir)}
	s.Ctx.Variables["var"] = cty.ObjectVal(s.Vars)
	s.evalLocals()
	return s, nil
}

// rootVariables returns the roots every expression may reference, except
// var and local.
func (m *Module) rootVariables(refs map[string]cty.Value) map[string]cty.Value {
	roots := map[string]cty.Value{
		"path":      cty.ObjectVal(map[string]cty.Value{"module": cty.StringVal(m.Dir), "root": cty.StringVal(m.Dir), "cwd": cty.StringVal(m.Dir)}),
		"terraform": cty.ObjectVal(map[string]cty.Value{"workspace": cty.StringVal("default")}),
		"count":     cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(0)}),
		"each":      cty.DynamicVal,
	}
	resources := map[string]map[string]cty.Value{}
	data := map[string]map[string]cty.Value{}
	calls := map[string]cty.Value{}
	for _, b := range m.Blocks {
		var into map[string]map[string]cty.Value
		key := b.Name()
		switch b.Type {
		case "module":
			if val, ok := refs["module."+key]; ok {
				calls[key] = val
			} else {
				calls[key] = cty.DynamicVal
			}
			continue
		case "resource":
			into = resources
		case "data":
			into, key = data, "data."+key
		default:
			continue
		}
		if into[b.Labels[0]] == nil {
			into[b.Labels[0]] = map[string]cty.Value{}
		}
		val, ok := refs[key]
		if !ok {
			val = cty.DynamicVal
		}
		into[b.Labels[0]][b.Labels[1]] = val
	}
	for typ, byName := range resources {
		roots[typ] = cty.ObjectVal(byName)
	}
	dataRoot := map[string]cty.Value{}
	for typ, byName := range data {
		dataRoot[typ] = cty.ObjectVal(byName)
	}
	roots["data"] = cty.ObjectVal(dataRoot)
	roots["module"] = cty.ObjectVal(calls)
	return roots
}

// evalLocals evaluates the locals in dependency order.
func (s *Scope) evalLocals() {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string)
	visit = func(name string) {
		if state[name] != 0 {
			if state[name] == 1 {
				s.LocalErrs[name] = fmt.Errorf("local.%s depends on itself", name)
			}
			return
		}
		state[name] = 1
		a := s.M.Locals[name]
		for _, t := range a.Expr.Variables() {
			if t.RootName() != "local" || len(t) < 2 {
				continue
			}
			if dep, ok := t[1].(hcl.TraverseAttr); ok {
				if _, exists := s.M.Locals[dep.Name]; exists {
					visit(dep.Name)
				}
			}
		}
		s.Ctx.Variables["local"] = cty.ObjectVal(s.Locals)
		v, diags := a.Expr.Value(s.Ctx)
		if diags.HasErrors() {
			s.LocalErrs[name] = fmt.Errorf("local.%s: %s", name, diags.Error())
			v = cty.DynamicVal
		}
		s.Locals[name] = v
		state[name] = 2
	}
	names := make([]string, 0, len(s.M.Locals))
	for n := range s.M.Locals {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		visit(n)
	}
	s.Ctx.Variables["local"] = cty.ObjectVal(s.Locals)
}

// Local returns a local's value, failing when it did not evaluate or is
// not wholly known.
func (s *Scope) Local(name string) (cty.Value, error) {
	if err := s.LocalErrs[name]; err != nil {
		return cty.NilVal, err
	}
	v, ok := s.Locals[name]
	if !ok {
		return cty.NilVal, fmt.Errorf("no local.%s", name)
	}
	if !v.IsWhollyKnown() {
		return v, fmt.Errorf("local.%s is not known without AWS", name)
	}
	return v, nil
}

// Eval evaluates an expression in the module's scope.
func (s *Scope) Eval(expr hcl.Expression) (cty.Value, error) {
	return eval(expr, s.Ctx)
}

func eval(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, error) {
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return cty.DynamicVal, fmt.Errorf("%s", diags.Error())
	}
	return v, nil
}

// Instance is one (possibly dynamic-generated) block with the context its
// attributes evaluate in.
type Instance struct {
	Body *hclsyntax.Body
	Ctx  *hcl.EvalContext
}

// Root returns the instance of a top-level block, as its first instance
// when it has count (count.index = 0).
func (s *Scope) Root(b *Block) Instance { return Instance{Body: b.Body, Ctx: s.Ctx} }

// Each returns the instance of a for_each block at key: each.key is key
// and each.value its element of for_each.
func (s *Scope) Each(b *Block, key string) (Instance, error) {
	a, ok := b.Body.Attributes["for_each"]
	if !ok {
		return Instance{}, fmt.Errorf("tfeval: %s has no for_each", b.Name())
	}
	coll, err := s.Eval(a.Expr)
	if err != nil {
		return Instance{}, fmt.Errorf("tfeval: %s for_each: %w", b.Name(), err)
	}
	if !coll.IsWhollyKnown() || coll.IsNull() || !coll.CanIterateElements() {
		return Instance{}, fmt.Errorf("tfeval: %s: for_each is not a known collection", b.Name())
	}
	for it := coll.ElementIterator(); it.Next(); {
		k, v := it.Element()
		if coll.Type().IsSetType() {
			k = v
		}
		if k.AsString() == key {
			ctx := s.Ctx.NewChild()
			ctx.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": k, "value": v})}
			return Instance{Body: b.Body, Ctx: ctx}, nil
		}
	}
	return Instance{}, fmt.Errorf("tfeval: %s has no instance %q", b.Name(), key)
}

// Count evaluates a block's count: 1 without one.
func (s *Scope) Count(b *Block) (int, error) {
	a, ok := b.Body.Attributes["count"]
	if !ok {
		return 1, nil
	}
	v, err := s.Eval(a.Expr)
	if err != nil {
		return 0, err
	}
	if !v.IsKnown() || v.IsNull() {
		return 0, fmt.Errorf("%s: count is not known", b.Name())
	}
	n, _ := v.AsBigFloat().Int64()
	return int(n), nil
}

// Attr evaluates an attribute; an absent one is null.
func (i Instance) Attr(name string) (cty.Value, error) {
	a, ok := i.Body.Attributes[name]
	if !ok {
		return cty.NullVal(cty.DynamicPseudoType), nil
	}
	return eval(a.Expr, i.Ctx)
}

// Blocks returns the nested blocks of a type, expanding `dynamic` blocks
// of that type in source order.
func (i Instance) Blocks(typ string) ([]Instance, error) {
	var out []Instance
	for _, b := range i.Body.Blocks {
		switch {
		case b.Type == typ:
			out = append(out, Instance{Body: b.Body, Ctx: i.Ctx})
		case b.Type == "dynamic" && len(b.Labels) == 1 && b.Labels[0] == typ:
			gen, err := i.expandDynamic(b)
			if err != nil {
				return nil, err
			}
			out = append(out, gen...)
		}
	}
	return out, nil
}

func (i Instance) expandDynamic(b *hclsyntax.Block) ([]Instance, error) {
	iterator := b.Labels[0]
	if a, ok := b.Body.Attributes["iterator"]; ok {
		iterator = hcl.ExprAsKeyword(a.Expr)
	}
	fe, ok := b.Body.Attributes["for_each"]
	if !ok {
		return nil, fmt.Errorf("dynamic %q has no for_each", b.Labels[0])
	}
	coll, err := eval(fe.Expr, i.Ctx)
	if err != nil {
		return nil, fmt.Errorf("dynamic %q for_each: %w", b.Labels[0], err)
	}
	if !coll.IsWhollyKnown() {
		return nil, fmt.Errorf("dynamic %q for_each is not known without AWS", b.Labels[0])
	}
	var content *hclsyntax.Body
	for _, c := range b.Body.Blocks {
		if c.Type == "content" {
			content = c.Body
		}
	}
	if content == nil {
		return nil, fmt.Errorf("dynamic %q has no content block", b.Labels[0])
	}
	var out []Instance
	if coll.IsNull() {
		return nil, nil
	}
	for it := coll.ElementIterator(); it.Next(); {
		k, v := it.Element()
		ctx := i.Ctx.NewChild()
		ctx.Variables = map[string]cty.Value{iterator: cty.ObjectVal(map[string]cty.Value{"key": k, "value": v})}
		out = append(out, Instance{Body: content, Ctx: ctx})
	}
	return out, nil
}

// CheckVariable evaluates the validation blocks of a variable for a value
// and returns the error messages of the failing ones.
func (m *Module) CheckVariable(name string, val cty.Value) ([]string, error) {
	b := m.Find("variable", name)
	if b == nil {
		return nil, fmt.Errorf("no variable %q", name)
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{name: val})},
		Functions: Functions(m.Dir),
	}
	var failed []string
	for _, vb := range b.Body.Blocks {
		if vb.Type != "validation" {
			continue
		}
		ok, err := eval(vb.Body.Attributes["condition"].Expr, ctx)
		if err != nil {
			return nil, fmt.Errorf("var.%s validation: %w", name, err)
		}
		if ok.IsKnown() && !ok.IsNull() && ok.False() {
			msg, _ := eval(vb.Body.Attributes["error_message"].Expr, ctx)
			failed = append(failed, msg.AsString())
		}
	}
	return failed, nil
}

// ReadFile reads a file of the module directory.
func (m *Module) ReadFile(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(m.Dir, name))
}
