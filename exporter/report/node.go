package report

import (
	"html/template"
	"regexp"
	"strconv"
	"strings"
)

// node is one SVG element. Charts are trees of nodes, never glued strings: render escapes
// every attribute value and text, so a name from the archive can only ever be text
// (TestHostileNamesInert). Element and attribute names come from code; el checks them anyway.
type node struct {
	tag   string
	attrs []attr
	text  string
	kids  []*node
}

type attr struct{ name, value string }

// nameRE is what an element or attribute name of the charts looks like.
var nameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*$`)

// el makes an element from name, value pairs: a string (escaped), int or float64 (one decimal).
func el(tag string, pairs ...any) *node {
	if !nameRE.MatchString(tag) {
		panic("report: bad element name " + tag)
	}
	n := &node{tag: tag}
	for i := 0; i+1 < len(pairs); i += 2 {
		name := pairs[i].(string)
		if !nameRE.MatchString(name) {
			panic("report: bad attribute name " + name)
		}
		var v string
		switch x := pairs[i+1].(type) {
		case string:
			v = x
		case int:
			v = strconv.Itoa(x)
		case float64:
			v = strconv.FormatFloat(x, 'f', 1, 64)
		default:
			panic("report: attribute " + name + " of unsupported type")
		}
		n.attrs = append(n.attrs, attr{name, v})
	}
	return n
}

// add appends children and returns n.
func (n *node) add(kids ...*node) *node {
	n.kids = append(n.kids, kids...)
	return n
}

// say sets n's text and returns n.
func (n *node) say(text string) *node {
	n.text = text
	return n
}

// titled adds a <title>, the tooltip a browser shows on hover.
func (n *node) titled(text string) *node {
	return n.add(el("title").say(text))
}

func (n *node) render(b *strings.Builder) {
	b.WriteString("<" + n.tag)
	for _, a := range n.attrs {
		b.WriteString(" " + a.name + `="` + template.HTMLEscapeString(a.value) + `"`)
	}
	b.WriteString(">")
	b.WriteString(template.HTMLEscapeString(n.text))
	for _, k := range n.kids {
		k.render(b)
	}
	b.WriteString("</" + n.tag + ">")
}

// html renders the tree for the page template: the one place markup becomes template.HTML.
func (n *node) html() template.HTML {
	var b strings.Builder
	n.render(&b)
	return template.HTML(b.String())
}
