package exporter_test

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/grammars"
)

// TestKeyGrammar: the archive key table through the key grammar and the
// layout that plans and cleans up by it.
func TestKeyGrammar(t *testing.T) {
	for _, tc := range grammars.Keys() {
		k, ok := exporter.ParseKey(tc.Key)
		want := exporter.Key{Prefix: tc.Prefix, Account: tc.Account, Region: tc.Region, Cluster: tc.Cluster, Day: tc.Day, Codec: exporter.Codec(tc.Codec)}
		if ok != tc.OK || (ok && k != want) {
			t.Errorf("ParseKey(%q) = %+v, %v; want %+v, %v", tc.Key, k, ok, want, tc.OK)
		}
		if !tc.OK {
			continue
		}
		l := exporter.Layout{Prefix: tc.Prefix, Account: tc.Account, Region: tc.Region, Cluster: tc.Cluster}
		if d, c, ok := l.ParseKey(tc.Key); !ok || !d.Equal(tc.Day) || c != want.Codec {
			t.Errorf("Layout.ParseKey(%q) = %v, %v, %v", tc.Key, d, c, ok)
		}
		if got := l.Key(tc.Day, want.Codec); got != tc.Key {
			t.Errorf("Layout.Key = %q, want the key it parses from, %q", got, tc.Key)
		}
		// Another cluster never claims the file, however alike the names.
		for _, other := range []string{tc.Cluster + "-eu", "x" + tc.Cluster, tc.Cluster[:len(tc.Cluster)-1]} {
			l.Cluster = other
			if _, ok := l.ParseDay(tc.Key); ok {
				t.Errorf("cluster %q claims %q", other, tc.Key)
			}
		}
	}
}

func TestClusterARNGrammar(t *testing.T) {
	for _, tc := range grammars.ClusterARNs() {
		c, ok := exporter.ParseClusterARN(tc.ARN)
		if ok != tc.OK || c.Name != tc.Name || c.ARN != tc.ARN {
			t.Errorf("ParseClusterARN(%q) = %+v, %v; want name %q, %v", tc.ARN, c, ok, tc.Name, tc.OK)
		}
	}
}

func TestBaseURLGrammar(t *testing.T) {
	for _, tc := range grammars.BaseURLs() {
		if got := exporter.IsBaseURL(tc.URL); got != tc.OK {
			t.Errorf("IsBaseURL(%q) = %v, want %v", tc.URL, got, tc.OK)
		}
		if _, err := exporter.ParseHTTPURL(tc.URL); (err == nil) != (tc.OK || tc.QueryOnly) {
			t.Errorf("ParseHTTPURL(%q): %v", tc.URL, err)
		}
	}
}

// definitions are the spellings of each grammar that only its home may
// hold as a Go string literal: a second copy elsewhere in the product is a
// second grammar, which the tables would not reach.
var definitions = []struct {
	what string
	home string // the one file, from the repository root
	is   func(lit string) bool
}{
	{"the EKS cluster ARN pattern", "exporter/names.go", func(s string) bool {
		return strings.Contains(s, ":eks:(") || strings.Contains(s, ":eks:[")
	}},
	{"the archive key's account folder", "exporter/exporter.go", func(s string) bool { return strings.Contains(s, "account_id=") && !strings.Contains(s, " ") }},
	{"the URL scheme check", "exporter/urls.go", func(s string) bool { return s == "https" || s == "http" }},
	{"the label and annotation column prefixes", "exporter/schema/names.go", func(s string) bool {
		return s == "properties.labels." || s == "properties.annotations."
	}},
	{"Kubecost's special allocation names", "exporter/schema/names.go", func(s string) bool {
		return slices.Contains([]string{"__idle__", "__shared__", "__unmounted__", "__unallocated__", "__external__"}, s)
	}},
	// A call f("CLUSTER_ARNS") reads the variable, whose pairs only config parses.
	{"the CLUSTER_ARNS variable's reader", "exporter/config/clusters.go", func(s string) bool { return s == "call:CLUSTER_ARNS" }},
}

// The destination's variables are derived from its own code, never
// listed here: the env tags of its struct tags (Settings) and every name
// its product files spell as a variable, whether a lookup's argument
// (AWS_DEFAULT_REGION), a row of the file's table (pairs: AWS_ENDPOINT_URL_S3,
// AWS_MAX_ATTEMPTS) or a rule's name. Only the destination may declare,
// read or check one: another package that spells one exactly, in a tag,
// as a concatenation of literals, or as the start of a name it builds
// ("S3_" + x) is reading the destination's settings behind its back, and
// the archive is no longer described in one place.
const destHome = "exporter/destination/"

var varNameRE = regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)

// sdkEndpoints are what awsauth may spell of them: it resolves the AWS
// SDK's endpoint variables for every AWS client (STS and Secrets Manager
// too) through the lookup the destination hands it (Settings.AWSLookup).
var sdkEndpoints = map[string]bool{"AWS_ENDPOINT_URL": true, "AWS_ENDPOINT_URL_": true}

// destinationVars derives the destination's variables from the product
// literals of its home.
func destinationVars(lits []grammars.Literal) map[string]bool {
	vars := map[string]bool{}
	for _, l := range lits {
		if !inHome(l.File, destHome) {
			continue
		}
		if l.Tag {
			if env := reflect.StructTag(l.Value).Get("env"); env != "" {
				vars[env] = true
			}
		} else if varNameRE.MatchString(l.Value) {
			vars[l.Value] = true
		}
	}
	return vars
}

// destinationViolations are the ways the product outside the destination
// reads, declares or decides one of its settings, found by what the code
// does, not by how a name is spelled: a literal that spells a destination
// variable or a pattern of one ("S3_%s_TIMEOUT", "S3_" + x); a struct tag
// that declares a variable in the destination's namespace (S3_*, AWS_*,
// BILL_*, ...: the first words of its variables), known or new, or one of
// its flags; an environment read by a name that is not a constant
// (os.Environ included), or that is the destination's; a check of a field that carries a destination setting
// (the s3store.Options the destination fills from Settings, or a field
// of Settings itself) against anything but its zero value; a function or
// a call that picks a region or a timeout; and the region pattern
// compiled outside its home.
func destinationViolations(lits []grammars.Literal, fx *grammars.Facts) []string {
	vars := destinationVars(lits)
	ns := namespace(vars)
	var out []string
	bad := func(file string, format string, args ...any) {
		out = append(out, file+": "+fmt.Sprintf(format, args...)+"; the destination ("+destHome+") describes where the data lives")
	}
	for _, l := range lits {
		if inHome(l.File, destHome) || (inHome(l.File, "exporter/awsauth/") && sdkEndpoints[l.Value]) || l.Tag {
			continue
		}
		prefixOf := l.Operand && strings.HasSuffix(l.Value, "_") && slices.ContainsFunc(slices.Collect(maps.Keys(vars)), func(v string) bool {
			return strings.HasPrefix(v, l.Value)
		})
		if vars[l.Value] || prefixOf {
			bad(l.File, "spells the destination variable %q", l.Value)
		} else if v := patternOf(l, vars); v != "" {
			bad(l.File, "builds the destination variable %q from %q", v, l.Value)
		}
	}
	settingFields, carried := map[string]bool{}, map[string]bool{}
	for _, f := range fx.EnvTags {
		switch {
		case inHome(f.File, destHome):
			settingFields[f.Value] = true
		case vars[f.Name] || inNamespace(f.Name, ns):
			bad(f.File, "declares the destination variable %q", f.Name)
		}
	}
	flags := map[string]bool{}
	for _, f := range fx.FlagTags {
		if inHome(f.File, destHome) {
			flags[f.Name] = true
		}
	}
	for _, f := range fx.FlagTags {
		if !inHome(f.File, destHome) && flags[f.Name] {
			bad(f.File, "declares the destination's flag -%s", f.Name)
		}
	}
	for _, f := range fx.Fields {
		if !inHome(f.File, destHome) {
			delete(settingFields, f.Name) // a name other structs use too (Region) says nothing
		}
	}
	for _, f := range fx.OptionsFields {
		if inHome(f.File, destHome) && f.Value == "setting" {
			carried[f.Name] = true
		}
	}
	for _, f := range fx.Getenv {
		switch {
		case inHome(f.File, destHome):
		case f.Name == "" && (inHome(f.File, "exporter/") || inHome(f.File, "cmd/kubecost-s3-exporter/")):
			// The exporter's; build tools (internal/imagebuild) pass their
			// environment to the commands they run.
			bad(f.File, "reads the environment (%s) by a name that is not a constant, which may be the destination's", f.Value)
		case vars[f.Name] || inNamespace(f.Name, ns):
			bad(f.File, "spells the destination variable %q", f.Name)
		}
	}
	for _, f := range fx.Checks {
		if !inHome(f.File, destHome) && (settingFields[f.Name] || (carried[f.Name] && inHome(f.File, "exporter/s3store/"))) {
			bad(f.File, "checks the destination setting %s again (line %d)", f.Name, f.Line)
		}
	}
	for _, f := range fx.Deciders {
		if !inHome(f.File, destHome) {
			bad(f.File, "decides a region or a timeout (%s %s, line %d)", f.Value, f.Name, f.Line)
		}
	}
	for _, f := range fx.Compiles {
		if !inHome(f.File, "exporter/names.go") {
			bad(f.File, "compiles the region pattern again (line %d); call exporter.IsRegion", f.Line)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// namespace is the first word of every destination variable: S3, AWS,
// BILL, CUR, ... A new variable in one of them is the destination's too.
func namespace(vars map[string]bool) map[string]bool {
	ns := map[string]bool{}
	for v := range vars {
		first, _, _ := strings.Cut(v, "_")
		ns[first] = true
	}
	return ns
}

func inNamespace(name string, ns map[string]bool) bool {
	first, _, ok := strings.Cut(name, "_")
	return ok && ns[first]
}

// verbRE is a fmt verb; nameTextRE a literal made of a variable name's
// characters and verbs alone.
var (
	verbRE     = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	nameTextRE = regexp.MustCompile(`^(?:[A-Z0-9_]|%[-+# 0-9.]*[a-zA-Z])+$`)
)

// patternOf is the destination variable a literal builds when formatted
// or concatenated, "" when it builds none: "S3_%s_TIMEOUT" builds
// S3_REQUEST_TIMEOUT.
func patternOf(l grammars.Literal, vars map[string]bool) string {
	if !nameTextRE.MatchString(l.Value) || !strings.Contains(l.Value, "_") || !strings.ContainsAny(l.Value, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") || (!l.Operand && !verbRE.MatchString(l.Value)) {
		return ""
	}
	parts := verbRE.Split(l.Value, -1)
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	p := strings.Join(parts, ".*")
	if l.Operand {
		p = ".*" + p + ".*"
	}
	re := regexp.MustCompile("^" + p + "$")
	for _, v := range slices.Sorted(maps.Keys(vars)) {
		if re.MatchString(v) {
			return v
		}
	}
	return ""
}

// TestDestinationVariablesDerived: the derived list holds every env tag
// of the compiled Settings and the variables the destination reads
// beyond its tags, so that the guard below sees what it guards.
func TestDestinationVariablesDerived(t *testing.T) {
	lits, err := grammars.ProductLiterals("..")
	if err != nil {
		t.Fatal(err)
	}
	vars := destinationVars(lits)
	st := reflect.TypeFor[destination.Settings]()
	for i := range st.NumField() {
		if env := st.Field(i).Tag.Get("env"); env != "" && !vars[env] {
			t.Errorf("Settings' %s (env %s) is not derived", st.Field(i).Name, env)
		}
	}
	for _, v := range []string{"S3_REQUEST_TIMEOUT", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL_S3", "AWS_MAX_ATTEMPTS"} {
		if !vars[v] {
			t.Errorf("%s, which the destination reads, is not derived: %v", v, slices.Sorted(maps.Keys(vars)))
		}
	}
}

// inHome reports whether file is def's home: the file, or any file of a
// home that is a folder (ends in /).
func inHome(file, home string) bool {
	if strings.HasSuffix(home, "/") {
		return strings.HasPrefix(file, home)
	}
	return file == home
}

// TestGrammarsDefinedOnce walks the product's Go files (not tests, not the
// test tooling, which imitates Kubecost and AWS on purpose) and finds
// every string literal that spells a grammar: each must be in its home,
// and a destination variable in the destination (destinationViolations;
// TestGuardCatchesMutations shows what it catches).
func TestGrammarsDefinedOnce(t *testing.T) {
	lits, err := grammars.ProductLiterals("..")
	if err != nil {
		t.Fatal(err)
	}
	found := make([]map[string]bool, len(definitions))
	for i, def := range definitions {
		found[i] = map[string]bool{}
		for _, l := range lits {
			if def.is(l.Value) || (l.Arg && def.is("call:"+l.Value)) {
				found[i][l.File] = true
			}
		}
	}
	fx, err := grammars.ProductFacts("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range destinationViolations(lits, fx) {
		t.Error(v)
	}
	for i, def := range definitions {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(found[i])), func(f string) bool { return inHome(f, def.home) }) {
			t.Errorf("%s: not found in its home %s; the test no longer sees the definition", def.what, def.home)
		}
		for file := range found[i] {
			if !inHome(file, def.home) {
				t.Errorf("%s is spelled again in %s; call the one in %s", def.what, file, def.home)
			}
		}
	}
}
