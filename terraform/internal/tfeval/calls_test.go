package tfeval_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// TestCallsAndAddresses: a local module call gets its arguments as the
// child's variables, the planned addresses expand count, for_each and the
// call, moved blocks carry the call's prefix, and Each binds each.key and
// each.value.
func TestCallsAndAddresses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("root/main.tf", `
variable "n" { default = 2 }
locals { sets = { a = "x", b = "y" } }
resource "aws_a" "counted" { count = var.n }
resource "aws_b" "each" {
  for_each = local.sets
  name     = "${each.key}-${each.value}"
}
module "child" {
  source = "../child"
  label  = "L${var.n}"
}
moved {
  from = aws_a.old
  to   = aws_a.counted
}
`)
	write("child/main.tf", `
variable "label" { type = string }
resource "aws_c" "this" { tags = { label = var.label } }
moved {
  from = aws_c.before
  to   = aws_c.this
}
`)
	m, err := tfeval.Load(filepath.Join(dir, "root"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Evaluate(tfeval.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	addrs, moves, err := s.Addresses()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`aws_a.counted[0]`, `aws_a.counted[1]`, `aws_b.each["a"]`, `aws_b.each["b"]`, `module.child.aws_c.this`}
	if !slices.Equal(addrs, want) {
		t.Errorf("addresses %v, want %v", addrs, want)
	}
	wantMoves := []tfeval.Move{{From: "module.child.aws_c.before", To: "module.child.aws_c.this"}, {From: "aws_a.old", To: "aws_a.counted"}} // block order
	if !slices.Equal(moves, wantMoves) {
		t.Errorf("moves %v, want %v", moves, wantMoves)
	}
	child, err := s.Call("child", nil)
	if err != nil {
		t.Fatal(err)
	}
	tags, err := child.Root(child.M.Find("resource", "aws_c", "this")).Attr("tags")
	if err != nil || !tags.GetAttr("label").RawEquals(cty.StringVal("L2")) {
		t.Errorf("child tags %#v %v", tags, err)
	}
	inst, err := s.Each(m.Find("resource", "aws_b", "each"), "b")
	if err != nil {
		t.Fatal(err)
	}
	if name, err := inst.Attr("name"); err != nil || name.AsString() != "b-y" {
		t.Errorf("each name %#v %v", name, err)
	}
	if _, err := s.Each(m.Find("resource", "aws_b", "each"), "c"); err == nil {
		t.Error("Each found an instance for_each lacks")
	}
}
