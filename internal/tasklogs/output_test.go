package tasklogs

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// stdout lines to stdout, the other files' to stderr, each with its task;
// a partial line waits for its newline or Flush.
func TestPrefixedOutputSplitsStdoutFromTheOtherFiles(t *testing.T) {
	var stdout, stderr bytes.Buffer
	out := PrefixedOutput(&stdout, &stderr)
	_, _ = out("chief:0", "stdout").Write([]byte("hello\n"))
	w := out("worker:1", "stderr")
	_, _ = w.Write([]byte("oops"))
	require.Equal(t, "[chief:0] hello\n", stdout.String())
	require.Empty(t, stderr.String())
	flush(w)
	require.Equal(t, "[worker:1] oops\n", stderr.String())
}

// One writer for both: one destination, lines in the order they were written.
func TestPrefixedOutputToOneWriter(t *testing.T) {
	var both bytes.Buffer
	out := PrefixedOutput(&both, &both)
	_, _ = out("chief:0", "stdout").Write([]byte("a\n"))
	_, _ = out("chief:0", "stderr").Write([]byte("b\n"))
	require.Equal(t, "[chief:0] a\n[chief:0] b\n", both.String())
	require.True(t, sameWriter(&both, &both))
	require.False(t, sameWriter(&both, &bytes.Buffer{}))
}
