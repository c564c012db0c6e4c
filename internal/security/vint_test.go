package security

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Golden encodings worked out by hand from WritableUtils.writeVLong: values
// in [-112,127] are one byte; otherwise a marker (-112-n for positive,
// -120-n for negative with the value one's-complemented) and n big-endian
// bytes.
var vintGolden = []struct {
	v    int64
	want []byte
}{
	{0, []byte{0x00}},
	{1, []byte{0x01}},
	{127, []byte{0x7f}},
	{-1, []byte{0xff}},
	{-112, []byte{0x90}},
	{128, []byte{0x8f, 0x80}},              // marker -113
	{255, []byte{0x8f, 0xff}},              // marker -113
	{256, []byte{0x8e, 0x01, 0x00}},        // marker -114
	{300, []byte{0x8e, 0x01, 0x2c}},        // marker -114
	{-113, []byte{0x87, 0x70}},             // marker -121, ^-113 = 112
	{-256, []byte{0x87, 0xff}},             // ^-256 = 255
	{-257, []byte{0x86, 0x01, 0x00}},       // marker -122, ^-257 = 256
	{1 << 31, []byte{0x8c, 0x80, 0, 0, 0}}, // marker -116
	{math.MaxUint32, []byte{0x8c, 0xff, 0xff, 0xff, 0xff}},
	{-1 << 31, []byte{0x84, 0x7f, 0xff, 0xff, 0xff}}, // marker -124
	{math.MaxInt64, []byte{0x88, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	{math.MinInt64, []byte{0x80, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
}

func TestVLongGolden(t *testing.T) {
	for _, g := range vintGolden {
		require.Equal(t, g.want, appendVLong(nil, g.v), "encode %d", g.v)
		v, n, err := readVLong(append(g.want, 0xAA)) // trailing byte must be left alone
		require.NoError(t, err, "decode %d", g.v)
		require.Equal(t, g.v, v)
		require.Equal(t, len(g.want), n)
	}
}

func TestVLongDecodeEdges(t *testing.T) {
	_, _, err := readVLong(nil)
	require.ErrorIs(t, err, errShortVInt)
	_, _, err = readVLong([]byte{0x8e, 0x01}) // says 2 bytes follow, has 1
	require.ErrorIs(t, err, errShortVInt)
	// Non-minimal encodings are accepted, as Java accepts them.
	v, n, err := readVLong([]byte{0x8e, 0x00, 0x05})
	require.NoError(t, err)
	require.Equal(t, int64(5), v)
	require.Equal(t, 3, n)
}

func TestVLongRoundTrip(t *testing.T) {
	for _, v := range []int64{-1 << 40, -65536, -129, -128, -114, 112, 1000, 1 << 20, 1 << 56, math.MaxInt32} {
		got, _, err := readVLong(appendVLong(nil, v))
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
}
