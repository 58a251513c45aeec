package awsauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// StallError is a connection that made no progress for After; as a timeout, the SDK
// retries the call on a new connection.
type StallError struct {
	Dir     string // "read" or "write"
	After   time.Duration
	Setting string // the variable that sets After, for the message
}

func (e *StallError) Error() string {
	msg := fmt.Sprintf("no progress for %s while waiting to %s", e.After, e.Dir)
	if e.Setting != "" {
		msg += " (" + e.Setting + ")"
	}
	return msg
}

// Bound is the bound broken and its setting, for a caller that words the error (s3store).
func (e *StallError) Bound() (time.Duration, string) { return e.After, e.Setting }

// Timeout marks the error as retryable for the SDK.
func (e *StallError) Timeout() bool { return true }

// Temporary is read by the SDK's connection-error check.
func (e *StallError) Temporary() bool { return true }

// NewHTTPClient is the HTTP client of every AWS call (S3, STS, Secrets Manager): the
// response headers must come within timeout of the request, and neither body may stall
// longer, else a StallError closes the connection (retried like any timeout). No call is
// bounded in total: a large part on a slow link is fine while bytes move.
func NewHTTPClient(timeout time.Duration, setting string) *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		// A backstop should no read be pending: the watchdog fails a wait, naming the setting.
		tr.ResponseHeaderTimeout = 2 * timeout
		dial := tr.DialContext
		if dial == nil {
			dial = (&net.Dialer{Timeout: timeout}).DialContext
		}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &watchdogConn{Conn: c, timeout: timeout, setting: setting}, nil
		}
	})
}

// watchdogConn fails a read or write that makes no progress for timeout. Writing progress
// keeps the pending read alive (the response cannot start before the body is sent), so a
// long upload on a slow link passes and a server that stops reading or answering is caught.
type watchdogConn struct {
	net.Conn
	timeout   time.Duration
	setting   string
	lastWrite atomic.Int64 // unix nanoseconds of the last written byte
	// stall is the first StallError. The other direction then fails with "use of closed
	// network connection"; reporting the stall keeps the cause and its Timeout().
	stall atomic.Pointer[StallError]
}

func (c *watchdogConn) stalled(dir string) error {
	e := &StallError{Dir: dir, After: c.timeout, Setting: c.setting}
	c.stall.CompareAndSwap(nil, e)
	return c.stall.Load()
}

func (c *watchdogConn) cause(err error) error {
	if s := c.stall.Load(); err != nil && s != nil {
		return s
	}
	return err
}

// chunk is sent per Write deadline, so a trickling large write is judged by its progress.
const chunk = 64 << 10

func (c *watchdogConn) Read(p []byte) (int, error) {
	deadline := time.Now().Add(c.timeout)
	for {
		if err := c.Conn.SetReadDeadline(deadline); err != nil {
			return 0, err
		}
		n, err := c.Conn.Read(p)
		if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, c.cause(err)
		}
		// The request body is still moving: wait until timeout after its last byte.
		if next := time.Unix(0, c.lastWrite.Load()).Add(c.timeout); next.After(time.Now()) {
			deadline = next
			continue
		}
		return 0, c.stalled("read")
	}
}

func (c *watchdogConn) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
			return written, err
		}
		end := min(len(p), written+chunk)
		n, err := c.Conn.Write(p[written:end])
		written += n
		if n > 0 {
			c.lastWrite.Store(time.Now().UnixNano())
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return written, c.stalled("write")
		}
		if err != nil {
			return written, c.cause(err)
		}
	}
	return written, nil
}
