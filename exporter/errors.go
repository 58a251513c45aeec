package exporter

import (
	"fmt"
	"strings"
)

// FieldError is one invalid setting (environment variable, option or argument), reported
// the same way by config, stores and the CLI: the name, the value and what is accepted.
type FieldError struct {
	Field, Value, Msg string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s=%q is invalid: %s", e.Field, e.Value, e.Msg)
}

// FieldErrors is every invalid setting, in declaration order.
type FieldErrors []*FieldError

func (e FieldErrors) Error() string {
	parts := make([]string, len(e))
	for i, fe := range e {
		parts[i] = fe.Error()
	}
	return strings.Join(parts, "; ")
}

// Innermost follows err's chain to its root cause (a joined error's first branch).
func Innermost(err error) error {
	for {
		var next error
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next = u.Unwrap()
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 {
				next = errs[0]
			}
		}
		if next == nil {
			return err
		}
		err = next
	}
}
