package executor

import (
	"fmt"
	"io"
	"sync"
)

// logger writes the launcher's own lines to the container's stderr,
// prefixed so they stand out among the program's. It never receives the
// secret: Run logs addresses, exit codes and reasons only.
type logger struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
}

func (l *logger) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, l.prefix+format+"\n", args...)
}
