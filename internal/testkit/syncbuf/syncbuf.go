// Package syncbuf is a bytes.Buffer safe for concurrent writers: a child
// process's stdout and stderr, or logs written from SDK goroutines, that a
// test reads back.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a mutex-guarded bytes.Buffer. The zero value is ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
