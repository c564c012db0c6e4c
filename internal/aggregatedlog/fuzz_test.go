package aggregatedlog

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// FuzzReadTFile feeds arbitrary bytes to the TFile and AggregatedLogFormat
// decoders: they must fail cleanly, never panic or allocate without bound.
func FuzzReadTFile(f *testing.F) {
	if data, err := os.ReadFile("testdata/tfile-none"); err == nil {
		f.Add(data)
		f.Add(data[len(data)-400:])
	}
	if data, err := os.ReadFile("testdata/tfile-gz"); err == nil {
		f.Add(data)
	}
	f.Add(append(make([]byte, 12), bcfileMagic...))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = ReadTFile(bytes.NewReader(data), int64(len(data)), func(f File) error {
			_, err := io.Copy(io.Discard, f.Content)
			return err
		})
	})
}

// FuzzVLong: every input decodes to a value or an error.
func FuzzVLong(f *testing.F) {
	f.Add([]byte{0x80, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{0xb8, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := readVLong(bytes.NewReader(data))
		if err == nil && len(data) > 0 {
			if got, _ := readVLong(bytes.NewReader(writeVLong(v))); got != v {
				t.Fatalf("%d does not round-trip", v)
			}
		}
	})
}
