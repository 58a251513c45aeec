package s3store

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Error is a failed store operation, in one short sentence instead of the SDK's hundreds of
// characters of request, host and upload IDs, which Unwrap keeps reachable.
type Error struct {
	Op  string // "put", "list", "open", "delete", "abort"
	Key string // the key, or the prefix for list
	Msg string
	Err error
}

func (e *Error) Error() string { return "s3: " + e.Op + " " + e.Key + ": " + e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// Brief is the message without the key, for a summary that names the day.
func (e *Error) Brief() string { return "S3 " + e.Msg }

// callError names the S3 API call that failed inside a store operation.
type callError struct {
	call string
	err  error
}

func (e *callError) Error() string { return e.call + ": " + e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

func opErr(call string, err error) error {
	if err == nil {
		return nil
	}
	return &callError{call: call, err: err}
}

// fail wraps err for op on key, and marks a failed precondition ErrPreconditionFailed.
func (s *Store) fail(op, key string, err error) error {
	e := &Error{Op: op, Key: key, Msg: s.brief(err), Err: err}
	if isPrecondition(err) {
		return fmt.Errorf("%w (%w)", e, exporter.ErrPreconditionFailed)
	}
	return e
}

// isPrecondition recognises a failed conditional write: HTTP 412 (S3, MinIO), and S3's 409
// ConditionalRequestConflict, another conditional write of the key in flight.
func isPrecondition(err error) bool {
	switch apiCode(err) {
	case "PreconditionFailed", "ConditionalRequestConflict":
		return true
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusPreconditionFailed
}

// brief is the failing call, the HTTP status and S3 code or network error, and the attempts.
func (s *Store) brief(err error) string {
	var b strings.Builder
	var ce *callError
	if errors.As(err, &ce) {
		b.WriteString(ce.call + ": ")
	}
	var re *awshttp.ResponseError
	var ae smithy.APIError
	var timeout interface{ Timeout() bool }
	// awsauth.StallError names its bound and setting, which the store does not know.
	var stall interface {
		Bound() (time.Duration, string)
	}
	// Timeouts first: net/http's header timeout also matches context.DeadlineExceeded.
	switch {
	case errors.As(err, &stall):
		after, setting := stall.Bound()
		fmt.Fprintf(&b, "no progress for %s (%s)", after, setting)
	case errors.As(err, &timeout) && timeout.Timeout():
		b.WriteString("timed out")
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		b.WriteString("cancelled")
	case errors.As(err, &re) && re.HTTPStatusCode() != 0:
		fmt.Fprintf(&b, "HTTP %d", re.HTTPStatusCode())
		if errors.As(err, &ae) {
			fmt.Fprintf(&b, " %s: %s", ae.ErrorCode(), clip(ae.ErrorMessage(), 40))
		}
	case errors.As(err, &ae):
		fmt.Fprintf(&b, "%s: %s", ae.ErrorCode(), clip(ae.ErrorMessage(), 40))
	default:
		b.WriteString(clip(exporter.Innermost(err).Error(), 120))
	}
	var ma *retry.MaxAttemptsError
	if errors.As(err, &ma) {
		fmt.Fprintf(&b, " (after %d attempts)", ma.Attempt)
	}
	return b.String()
}

// clip makes s one line of at most n bytes.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// isCode reports the SDK's modelled error T, or its code, which the SDK gives for an
// operation that does not model it or a server that answers differently.
func isCode[T error](err error, code string) bool {
	var t T
	return errors.As(err, &t) || apiCode(err) == code
}
