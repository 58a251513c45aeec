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

// destinationViolations are the literals outside the destination that
// spell one of its variables.
func destinationViolations(lits []grammars.Literal) []string {
	vars := destinationVars(lits)
	var out []string
	for _, l := range lits {
		if inHome(l.File, destHome) || (inHome(l.File, "exporter/awsauth/") && sdkEndpoints[l.Value]) {
			continue
		}
		name := l.Value
		if l.Tag {
			name = reflect.StructTag(l.Value).Get("env")
		}
		prefixOf := l.Operand && strings.HasSuffix(name, "_") && slices.ContainsFunc(slices.Collect(maps.Keys(vars)), func(v string) bool {
			return strings.HasPrefix(v, name)
		})
		if vars[name] || prefixOf {
			out = append(out, fmt.Sprintf("%s spells the destination variable %q; the destination (%s) reads its settings", l.File, name, destHome))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
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
	for _, v := range destinationViolations(lits) {
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
