package bill_test

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
)

var idSeeds = []string{
	"arn:aws:eks:us-east-1:111122223333:pod/prod/payments/api-7d9f/0b1c-uid",
	"arn:aws:eks:us-east-1:111122223333:pod/prod/payments",
	"arn:aws:eks:us-east-1:111122223333:pod/prod/payments/",
	"arn:aws-cn:eks:cn-north-1:1:pod/c/n/p/u/extra/parts",
	"arn:aws:ecs:us-east-1:1:task/c/t",
	"arn:aws:eks:us-east-1:1:pod",
	"arn:x:eks:a:b:c:pod/c/n/p",
	"pod/a/b/c", ":pod///", "///", "i-0123", "",
}

// splitPrefix is PodIDPrefix written the straightforward way.
func splitPrefix(id string) string {
	parts := strings.Split(id, "/")
	if len(parts) < 4 || !strings.HasSuffix(parts[0], ":pod") {
		return ""
	}
	return strings.Join(parts[:3], "/") + "/"
}

// FuzzPodIDPrefix checks the reader's allocation-free prefix against
// strings.Split, and that parsing the prefix gives what parsing the whole
// id gives (but the pod's name), which is why the reader may keep the
// prefix only.
func FuzzPodIDPrefix(f *testing.F) {
	for _, s := range idSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		got := string(bill.PodIDPrefix([]byte(id)))
		if want := splitPrefix(id); got != want {
			t.Fatalf("PodIDPrefix(%q) = %q, want %q", id, got, want)
		}
		full, okFull := bill.ParseResourceID(id)
		pre, okPre := bill.ParseResourceID(got)
		full.Name = ""
		if okFull != okPre || full != pre {
			t.Fatalf("%q: id parses to %+v %v, its prefix %q to %+v %v", id, full, okFull, got, pre, okPre)
		}
	})
}

// FuzzSplitPart checks SplitPart against strings.Split (1-based, "" past
// the end, as DuckDB's split_part).
func FuzzSplitPart(f *testing.F) {
	for _, s := range idSeeds {
		f.Add(s, "/", 3)
		f.Add(s, ":", 5)
	}
	f.Fuzz(func(t *testing.T, s, sep string, n int) {
		if sep == "" || n < 1 || n > 64 {
			return
		}
		want := ""
		if parts := strings.Split(s, sep); n <= len(parts) {
			want = parts[n-1]
		}
		if got := bill.SplitPart(s, sep, n); got != want {
			t.Fatalf("SplitPart(%q, %q, %d) = %q, want %q", s, sep, n, got, want)
		}
	})
}

// likeRegexp is LIKE as a regular expression, the straightforward way.
func likeRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?s)^")
	for _, r := range pattern {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// FuzzLike checks Like against a regular expression (ASCII: Like's _ is
// one byte, the regexp's . one rune; no pattern of the rules has _).
func FuzzLike(f *testing.F) {
	for _, s := range []string{"USE1-EKS-EC2-vCPU-Hours", "USE1-Fargate-vCPU-Hours:perCPU", "Fargate-GB-Hours-x", "", "%%", "a_b"} {
		for _, p := range []string{"%EKS-EC2-vCPU-Hours", "%Fargate-vCPU-Hours:perCPU", "%Spot%", "arn:%:eks:%:%:pod", "%/%/%/%", "%", "", "a_b", "%a%b%"} {
			f.Add(s, p)
		}
	}
	f.Fuzz(func(t *testing.T, s, p string) {
		for _, c := range s + p {
			if c >= 0x80 {
				return
			}
		}
		if got, want := bill.Like(s, p), likeRegexp(p).MatchString(s); got != want {
			t.Fatalf("Like(%q, %q) = %v, want %v", s, p, got, want)
		}
	})
}

// Every rule cites a source and has SQL and Go.
func TestRulesCite(t *testing.T) {
	for _, r := range bill.Rules() {
		if r.Name == "" || r.SQL == "" || r.Eval == nil || !strings.Contains(r.Cite, "http") && !strings.Contains(r.Cite, "scad_cca_summary_view") {
			t.Errorf("rule %q: name, SQL, Go and a citation required: %+v", r.Name, r)
		}
	}
}

// TestPropertiesRandom runs the fuzz targets' properties on random
// strings built from the pieces of resource ids and patterns, so that
// plain go test covers far more than the seeds.
func TestPropertiesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 2))
	pieces := []string{"arn", ":", "/", "aws", "eks", "pod", ":pod", "pod/", "us-east-1", "1", "%", "_", "x", "", "//", "cluster"}
	gen := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for range 50000 {
		id := gen()
		if got, want := string(bill.PodIDPrefix([]byte(id))), splitPrefix(id); got != want {
			t.Fatalf("PodIDPrefix(%q) = %q, want %q", id, got, want)
		}
		full, okFull := bill.ParseResourceID(id)
		pre, okPre := bill.ParseResourceID(splitPrefix(id))
		full.Name = ""
		if okFull != okPre || full != pre {
			t.Fatalf("%q: parses to %+v %v, its prefix to %+v %v", id, full, okFull, pre, okPre)
		}
		for _, sep := range []string{"/", ":"} {
			n := 1 + rng.IntN(8)
			want := ""
			if parts := strings.Split(id, sep); n <= len(parts) {
				want = parts[n-1]
			}
			if got := bill.SplitPart(id, sep, n); got != want {
				t.Fatalf("SplitPart(%q, %q, %d) = %q, want %q", id, sep, n, got, want)
			}
		}
		p := gen()
		if got, want := bill.Like(id, p), likeRegexp(p).MatchString(id); got != want {
			t.Fatalf("Like(%q, %q) = %v, want %v", id, p, got, want)
		}
	}
}
