package aggregated

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

// FuzzReadIFile: the IFile index (a Java-serialized object) and the regions
// it names must fail cleanly on any input.
func FuzzReadIFile(f *testing.F) {
	for _, name := range []string{"testdata/ifile-none", "testdata/ifile-gz"} {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = ReadIFile(bytes.NewReader(data), int64(len(data)), func(f File) error {
			_, err := io.Copy(io.Discard, f.Content)
			return err
		})
	})
}

// FuzzReadJava: the Java serialization reader on its own.
func FuzzReadJava(f *testing.F) {
	if data, err := os.ReadFile("testdata/ifile-none"); err == nil && len(data) > 1500 {
		n := int(data[len(data)-36])<<24 | int(data[len(data)-35])<<16 | int(data[len(data)-34])<<8 | int(data[len(data)-33])
		if n > 0 && n < len(data)-36 {
			f.Add(data[len(data)-36-n : len(data)-36])
		}
	}
	f.Add([]byte{0xac, 0xed, 0, 5, tcNull})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = readJava(data)
	})
}
