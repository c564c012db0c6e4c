package security

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseCredentials checks the decoder never panics or over-allocates on
// hostile input, and that whatever it accepts survives a round trip through
// both formats unchanged.
func FuzzParseCredentials(f *testing.F) {
	f.Add(smallV0)
	f.Add(smallV1)
	f.Add(fixtureCredentials().Marshal())
	if b, err := fixtureCredentials().MarshalFormat(FormatProtobuf); err == nil {
		f.Add(b)
	}
	for _, name := range []string{"hadoop-3.4.2-v0.hdts", "hadoop-3.4.2-v1.hdts"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("HDTS\x00\x01\x01a\x8c\xff\xff\xff\xff"))
	f.Add([]byte("HDTS\x01\x7f"))

	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := ParseCredentials(in)
		if err != nil {
			if c != nil {
				t.Fatalf("non-nil credentials with error %v", err)
			}
			return
		}
		for _, format := range []Format{FormatWritable, FormatProtobuf} {
			out, err := c.MarshalFormat(format)
			if err != nil {
				t.Fatalf("marshal %s: %v", format, err)
			}
			again, err := ParseCredentials(out)
			if err != nil {
				t.Fatalf("re-parse %s: %v", format, err)
			}
			requireSameCredentials(t, c, again)
		}
	})
}
