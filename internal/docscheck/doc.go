// Package docscheck holds the tests of docs/architecture.md: the map of
// the repository must stay true as packages, files and identifiers come
// and go. It has no code of its own.
package docscheck
