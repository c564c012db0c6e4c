package envpack

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand"
	"testing"

	"github.com/klauspost/pgzip"
	"github.com/stretchr/testify/require"
)

// pgzip's output must depend on the data, level and block size only, not
// on how many blocks run at once (the packing machine's CPU count) nor on
// how the data is cut into writes: that is what makes Pack deterministic.
func TestPgzipDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	data := make([]byte, 5*pgzipBlock+12345)
	for i := range data {
		data[i] = byte('a' + rng.Intn(8)) // compressible, with cross-block matches
	}
	var want []byte
	for _, tc := range []struct{ blocks, chunk int }{{1, 1 << 20}, {2, 4096}, {8, 777}, {3, len(data)}} {
		var buf bytes.Buffer
		z, err := pgzip.NewWriterLevel(&buf, DefaultLevel)
		require.NoError(t, err)
		require.NoError(t, z.SetConcurrency(pgzipBlock, tc.blocks))
		for p := data; len(p) > 0; {
			n := min(tc.chunk, len(p))
			_, err := z.Write(p[:n])
			require.NoError(t, err)
			p = p[n:]
		}
		require.NoError(t, z.Close())
		if want == nil {
			want = buf.Bytes()
		}
		require.True(t, bytes.Equal(want, buf.Bytes()), "blocks %d chunk %d", tc.blocks, tc.chunk)
	}
	zr, err := gzip.NewReader(bytes.NewReader(want))
	require.NoError(t, err)
	got, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got))
}
