package tasklogs

import (
	"io"
	"reflect"

	"github.com/tfyarn/tfyarn/internal/tasklogs/prefix"
)

// PrefixedOutput is the FollowOutput of tfyarn logs --follow and of run's
// live task output: a task's stdout lines go to stdout, its other files'
// (stderr) to stderr, each prefixed with its task ("[worker:1] ") as run
// --local prints them. stdout and stderr may be the same writer: its lines
// are then kept whole under one lock.
func PrefixedOutput(stdout, stderr io.Writer) FollowOutput {
	out := prefix.NewSink(stdout)
	errOut := out
	if !sameWriter(stdout, stderr) {
		errOut = prefix.NewSink(stderr)
	}
	return func(task, file string) io.Writer {
		sink := errOut
		if file == "stdout" {
			sink = out
		}
		return prefix.NewWriter(sink, "["+task+"] ")
	}
}

// sameWriter reports whether a and b are one writer, without comparing
// values whose type forbids it (== on those panics).
func sameWriter(a, b io.Writer) bool {
	t := reflect.TypeOf(a)
	return t != nil && t == reflect.TypeOf(b) && t.Comparable() && a == b
}
