package executor

import "io"

// teeWriter passes the program's stderr through and keeps its tail. Unlike
// io.MultiWriter it keeps writing to the tail when the pass-through fails
// (a closed stderr must not lose the exit report's lines) and never fails
// the program's write.
type teeWriter struct {
	out  io.Writer
	tail *tailBuffer
}

func (t teeWriter) Write(p []byte) (int, error) {
	_, _ = t.tail.Write(p)
	_, _ = t.out.Write(p)
	return len(p), nil
}
