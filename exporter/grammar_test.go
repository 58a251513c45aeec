package exporter_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
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

// destinationVars are the destination's settings: only its package
// declares (env tag), reads (a lookup call) or checks (a rule's name) them.
// Text that names one, such as an error, is fine anywhere.
var destinationVars = []string{"S3_BUCKET_NAME", "OBJECT_STORE_CONFIG_FILE", "S3_PREFIX", "OUTPUT_DIR", "IRSA_PARENT_IAM_ROLE_ARN",
	"S3_EXPECTED_BUCKET_OWNER", "S3_SSE", "S3_SSE_KMS_KEY_ID", "S3_PART_SIZE_MIB"}

func init() {
	for _, name := range destinationVars {
		definitions = append(definitions, struct {
			what string
			home string
			is   func(lit string) bool
		}{"the destination setting " + name, "exporter/destination/", func(s string) bool {
			return s == name || s == "call:"+name || strings.Contains(s, `env:"`+name+`"`)
		}})
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
// every string literal that spells a grammar: each must be in its home.
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
