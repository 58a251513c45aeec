package tfeval

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"sigs.k8s.io/yaml"
)

// Functions returns the Terraform functions the modules use, with file
// paths resolved against dir. A function missing here makes evaluation
// fail loudly rather than silently differ from Terraform.
func Functions(dir string) map[string]function.Function {
	fns := map[string]function.Function{
		"abs":          stdlib.AbsoluteFunc,
		"ceil":         stdlib.CeilFunc,
		"floor":        stdlib.FloorFunc,
		"max":          stdlib.MaxFunc,
		"min":          stdlib.MinFunc,
		"concat":       stdlib.ConcatFunc,
		"contains":     stdlib.ContainsFunc,
		"distinct":     stdlib.DistinctFunc,
		"element":      stdlib.ElementFunc,
		"flatten":      stdlib.FlattenFunc,
		"keys":         stdlib.KeysFunc,
		"lookup":       stdlib.LookupFunc,
		"merge":        stdlib.MergeFunc,
		"range":        stdlib.RangeFunc,
		"reverse":      stdlib.ReverseListFunc,
		"slice":        stdlib.SliceFunc,
		"sort":         stdlib.SortFunc,
		"values":       stdlib.ValuesFunc,
		"zipmap":       stdlib.ZipmapFunc,
		"compact":      stdlib.CompactFunc,
		"setunion":     stdlib.SetUnionFunc,
		"format":       stdlib.FormatFunc,
		"formatlist":   stdlib.FormatListFunc,
		"join":         stdlib.JoinFunc,
		"split":        stdlib.SplitFunc,
		"lower":        stdlib.LowerFunc,
		"upper":        stdlib.UpperFunc,
		"title":        stdlib.TitleFunc,
		"substr":       stdlib.SubstrFunc,
		"trim":         stdlib.TrimFunc,
		"trimprefix":   stdlib.TrimPrefixFunc,
		"trimsuffix":   stdlib.TrimSuffixFunc,
		"trimspace":    stdlib.TrimSpaceFunc,
		"regex":        stdlib.RegexFunc,
		"regexall":     stdlib.RegexAllFunc,
		"jsonencode":   stdlib.JSONEncodeFunc,
		"jsondecode":   stdlib.JSONDecodeFunc,
		"tostring":     stdlib.MakeToFunc(cty.String),
		"tonumber":     stdlib.MakeToFunc(cty.Number),
		"tobool":       stdlib.MakeToFunc(cty.Bool),
		"tolist":       stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"toset":        stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tomap":        stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"try":          tryfunc.TryFunc,
		"can":          tryfunc.CanFunc,
		"length":       lengthFunc,
		"coalesce":     coalesceFunc,
		"replace":      replaceFunc,
		"startswith":   stringPredicate(strings.HasPrefix),
		"endswith":     stringPredicate(strings.HasSuffix),
		"strcontains":  stringPredicate(strings.Contains),
		"alltrue":      boolFold(true),
		"anytrue":      boolFold(false),
		"one":          oneFunc,
		"sensitive":    identity,
		"nonsensitive": identity,
		"base64encode": stringFunc(func(s string) (string, error) { return base64.StdEncoding.EncodeToString([]byte(s)), nil }),
		"base64decode": stringFunc(func(s string) (string, error) { b, err := base64.StdEncoding.DecodeString(s); return string(b), err }),
		"sha1":         stringFunc(func(s string) (string, error) { h := sha1.Sum([]byte(s)); return hex.EncodeToString(h[:]), nil }),
		"sha256":       stringFunc(func(s string) (string, error) { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]), nil }),
		"yamlencode":   yamlencodeFunc,
		"file":         stringFunc(func(p string) (string, error) { b, err := os.ReadFile(resolve(dir, p)); return string(b), err }),
	}
	fns["templatefile"] = templatefileFunc(dir, fns)
	return fns
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

var identity = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "v", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true}},
	Type:   func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
	Impl:   func(args []cty.Value, _ cty.Type) (cty.Value, error) { return args[0], nil },
})

func stringFunc(f func(string) (string, error)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "s", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			out, err := f(args[0].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(out), nil
		},
	})
}

func stringPredicate(f func(s, x string) bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "s", Type: cty.String}, {Name: "x", Type: cty.String}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.BoolVal(f(args[0].AsString(), args[1].AsString())), nil
		},
	})
}

// lengthFunc is Terraform's length: strings count characters.
var lengthFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "v", Type: cty.DynamicPseudoType, AllowDynamicType: true, AllowUnknown: true}},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v := args[0]
		if v.Type() == cty.String {
			if !v.IsKnown() {
				return cty.UnknownVal(cty.Number), nil
			}
			return stdlib.Strlen(v)
		}
		if !v.Type().IsTupleType() && !v.Type().IsObjectType() && !v.IsKnown() {
			return cty.UnknownVal(cty.Number), nil
		}
		return v.Length(), nil
	},
})

// coalesceFunc is Terraform's coalesce: the first argument that is neither
// null nor an empty string.
var coalesceFunc = function.New(&function.Spec{
	VarParam: &function.Parameter{Name: "vals", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true},
	Type:     function.StaticReturnType(cty.DynamicPseudoType),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		for _, a := range args {
			if !a.IsKnown() {
				return cty.DynamicVal, nil
			}
			if a.IsNull() || (a.Type() == cty.String && a.AsString() == "") {
				continue
			}
			return a, nil
		}
		return cty.NilVal, fmt.Errorf("no non-null, non-empty-string arguments")
	},
})

// replaceFunc is Terraform's replace: a substring wrapped in slashes is a
// regular expression.
var replaceFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "str", Type: cty.String}, {Name: "substr", Type: cty.String}, {Name: "replace", Type: cty.String}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		sub := args[1].AsString()
		if len(sub) > 1 && strings.HasPrefix(sub, "/") && strings.HasSuffix(sub, "/") {
			return stdlib.RegexReplace(args[0], cty.StringVal(sub[1:len(sub)-1]), args[2])
		}
		return cty.StringVal(strings.ReplaceAll(args[0].AsString(), sub, args[2].AsString())), nil
	},
})

func boolFold(all bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Bool)}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			for it := args[0].ElementIterator(); it.Next(); {
				_, v := it.Element()
				if !v.IsKnown() {
					return cty.UnknownVal(cty.Bool), nil
				}
				if v.IsNull() || v.True() != all {
					return cty.BoolVal(!all), nil
				}
			}
			return cty.BoolVal(all), nil
		},
	})
}

var oneFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
	Type:   func(args []cty.Value) (cty.Type, error) { return cty.DynamicPseudoType, nil },
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		l := args[0]
		switch n := l.LengthInt(); n {
		case 0:
			return cty.NullVal(cty.DynamicPseudoType), nil
		case 1:
			return l.Index(cty.NumberIntVal(0)), nil
		default:
			return cty.NilVal, fmt.Errorf("one: %d elements", n)
		}
	},
})

var yamlencodeFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "v", Type: cty.DynamicPseudoType, AllowNull: true}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		j, err := ctyjson.Marshal(args[0], args[0].Type())
		if err != nil {
			return cty.NilVal, err
		}
		y, err := yaml.JSONToYAML(j)
		if err != nil {
			return cty.NilVal, err
		}
		return cty.StringVal(string(y)), nil
	},
})

func templatefileFunc(dir string, fns map[string]function.Function) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}, {Name: "vars", Type: cty.DynamicPseudoType}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := resolve(dir, args[0].AsString())
			src, err := os.ReadFile(p)
			if err != nil {
				return cty.NilVal, err
			}
			tmpl, diags := hclsyntax.ParseTemplate(src, p, hcl.Pos{Line: 1, Column: 1})
			if diags.HasErrors() {
				return cty.NilVal, diags
			}
			vars := map[string]cty.Value{}
			for it := args[1].ElementIterator(); it.Next(); {
				k, v := it.Element()
				vars[k.AsString()] = v
			}
			inner := map[string]function.Function{}
			for k, f := range fns {
				if k != "templatefile" {
					inner[k] = f
				}
			}
			out, diags := tmpl.Value(&hcl.EvalContext{Variables: vars, Functions: inner})
			if diags.HasErrors() {
				return cty.NilVal, diags
			}
			return out, nil
		},
	})
}
