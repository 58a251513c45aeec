// Package spdxcheck validates SPDX 2.3 JSON documents against the
// specification's own JSON schema (vendored under testdata, unchanged), so
// the tests judge the SBOM with the rules scanners read it by, not with
// rules the project wrote.
package spdxcheck

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed testdata/spdx-schema-2.3.json
var schemaJSON []byte

// SchemaURL is the schema's $id.
const SchemaURL = "http://spdx.org/rdf/terms/2.3"

var (
	once     sync.Once
	compiled *jsonschema.Schema
	errLoad  error
)

func schema() (*jsonschema.Schema, error) {
	once.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
		if err != nil {
			errLoad = fmt.Errorf("spdxcheck: schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(SchemaURL, doc); err != nil {
			errLoad = fmt.Errorf("spdxcheck: schema: %w", err)
			return
		}
		compiled, errLoad = c.Compile(SchemaURL)
	})
	return compiled, errLoad
}

// Validate returns nil when doc is valid SPDX 2.3 JSON, else every
// violation the schema finds.
func Validate(doc []byte) error {
	s, err := schema()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("spdxcheck: not JSON: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("spdxcheck: %w", err)
	}
	return nil
}
