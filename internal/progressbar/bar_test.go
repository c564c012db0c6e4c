package progressbar

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNothingOnAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	b := New(w, "upload")
	b.Update(0, 100)
	b.Update(100, 100)
	b.Done()
	require.NoError(t, w.Close())
	buf := make([]byte, 10)
	n, _ := r.Read(buf)
	require.Zero(t, n)

	var out bytes.Buffer // not a terminal either
	b = New(&out, "upload")
	b.Update(50, 100)
	b.Done()
	require.Zero(t, out.Len())

	var nilBar *Bar
	nilBar.Update(1, 2)
	nilBar.Done()
}

func TestDraw(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(1000, 0)
	b := newBar(&out, "env.tar.gz", 80, func() time.Time { return now })
	b.Update(0, 200<<20)
	now = now.Add(50 * time.Millisecond)
	b.Update(10<<20, 200<<20) // throttled
	now = now.Add(time.Second)
	b.Update(100<<20, 200<<20)
	now = now.Add(time.Millisecond)
	b.Update(200<<20, 200<<20) // the last one always draws
	b.Done()
	lines := strings.Split(out.String(), "\r")
	require.Len(t, lines, 4) // "", 0%, 50%, 100%
	require.Equal(t, "env.tar.gz [                       ]   0%  0 B / 200.0 MiB", lines[1])
	require.Contains(t, lines[2], "[===========            ]  50%  100.0 MiB / 200.0 MiB  95.2 MiB/s")
	require.True(t, strings.HasSuffix(lines[3], "\n"))
	require.Contains(t, lines[3], " 100%  200.0 MiB / 200.0 MiB")
}

func TestBytes(t *testing.T) {
	require.Equal(t, "0 B", Bytes(0))
	require.Equal(t, "1023 B", Bytes(1023))
	require.Equal(t, "1.5 KiB", Bytes(1536))
	require.Equal(t, "331.9 MiB", Bytes(348021350))
	require.Equal(t, "2.0 GiB", Bytes(2<<30))
}
