package prefix

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPrefixWriterKeepsLinesWhole(t *testing.T) {
	var out bytes.Buffer
	s := NewSink(&out)
	a, b := NewWriter(s, "[chief:0] "), NewWriter(s, "[worker:0] ")
	_, _ = a.Write([]byte("hel"))
	_, _ = b.Write([]byte("one\ntw"))
	_, _ = a.Write([]byte("lo\nworld\n"))
	_, _ = b.Write([]byte("o"))
	b.Flush()
	a.Flush() // nothing pending: writes nothing
	require.Equal(t, "[worker:0] one\n[chief:0] hello\n[chief:0] world\n[worker:0] two\n", out.String())
}
