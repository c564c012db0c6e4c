// Package syncbuf is a bytes.Buffer that goroutines may write to while
// another reads it: the output sink of processes and servers under test.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for concurrent Write and String. The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
