package aggregated

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"
)

// Skipping into a log gives exactly what reading through gives from there,
// in every format and compression (Hadoop-written testdata).
func TestSkipThenReadIsTheSameTail(t *testing.T) {
	for _, name := range []string{"tfile-none", "tfile-gz", "ifile-none", "ifile-gz"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		read := ReadTFile
		if name[0] == 'i' {
			read = ReadIFile
		}
		var full [][]byte
		if err := read(bytes.NewReader(data), int64(len(data)), func(f File) error {
			b, err := io.ReadAll(f.Content)
			full = append(full, b)
			return err
		}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, keep := range []int64{0, 1, 7, 100, 1 << 30} {
			i := 0
			if err := read(bytes.NewReader(data), int64(len(data)), func(f File) error {
				left, ok := Remaining(f.Content)
				if !ok || left != int64(len(full[i])) {
					t.Fatalf("%s %s: Remaining %d, %v; the content has %d", name, f.Name, left, ok, len(full[i]))
				}
				if err := Skip(f.Content, max(left-keep, 0)); err != nil {
					return err
				}
				got, err := io.ReadAll(f.Content)
				want := full[i][max(int64(len(full[i]))-keep, 0):]
				if !bytes.Equal(got, want) {
					t.Fatalf("%s %s keep %d: got %d bytes %q, want %q", name, f.Name, keep, len(got), got, want)
				}
				i++
				return err
			}); err != nil {
				t.Fatalf("%s keep %d: %v", name, keep, err)
			}
		}
	}
}

type countingReaderAt struct {
	r io.ReaderAt
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

// What is discarded beyond the buffer is not read: the tail of 50 MB costs
// about the tail.
func TestPosReaderDiscardDoesNotRead(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 50<<20/16)
	c := &countingReaderAt{r: bytes.NewReader(data)}
	p := newPosReader(c, 0, int64(len(data)), 64<<10)
	if b, err := p.ReadByte(); err != nil || b != '0' {
		t.Fatal(b, err)
	}
	if n, err := p.Discard(len(data) - 1 - 1<<20); err != nil || n != len(data)-1-1<<20 {
		t.Fatal(n, err)
	}
	start := time.Now()
	rest, err := io.ReadAll(p)
	if err != nil || !bytes.Equal(rest, data[len(data)-1<<20:]) {
		t.Fatalf("%d bytes, %v", len(rest), err)
	}
	if c.n > 1<<20+128<<10 {
		t.Fatalf("read %d bytes for a 1 MiB tail of 50 MiB (%s)", c.n, time.Since(start))
	}
}
