package contract

import (
	"strings"
	"testing"
)

func TestParseProgress(t *testing.T) {
	good := []struct {
		in   string
		want Progress
	}{
		{"120/1000", Progress{Fraction: 0.12, Step: 120, Total: 1000}},
		{" 120/1000\n", Progress{Fraction: 0.12, Step: 120, Total: 1000}},
		{"0/1", Progress{Fraction: 0, Step: 0, Total: 1}},
		{"20/20", Progress{Fraction: 1, Step: 20, Total: 20}},
		{"0.12", Progress{Fraction: 0.12}},
		{"1\n", Progress{Fraction: 1}},
		{"0", Progress{Fraction: 0}},
		{"1e-3", Progress{Fraction: 0.001}},
	}
	for _, c := range good {
		got, err := ParseProgress([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("ParseProgress(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if err := CheckProgress(got); err != nil {
			t.Errorf("ParseProgress(%q) = %+v fails its own Check: %v", c.in, got, err)
		}
	}
	bad := []string{
		"12%", "1.5", "-0.1", "NaN", "Inf", "abc", "120/", "/1000", "1001/1000", "-1/10", "1/0", "1/-5",
		"1.5/10", "1/2/3", "120 / 1000", "9007199254740993/9007199254740993", "0x10",
		strings.Repeat("1", MaxProgressFileSize+1), // huge: refused whole, not parsed
		"0.1\x00", "step 3",
	}
	for _, in := range bad {
		if got, err := ParseProgress([]byte(in)); err == nil {
			t.Errorf("ParseProgress(%.20q) = %+v, want an error", in, got)
		}
	}
	if _, err := ParseProgress([]byte(" \n")); err != ErrNoProgress {
		t.Errorf("an empty file: %v, want ErrNoProgress", err)
	}
}

func FuzzParseProgress(f *testing.F) {
	for _, s := range []string{"120/1000", "0.12", "1", "", "1/0", "2/1", "1e400", "-0", strings.Repeat("9", 70)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseProgress(b)
		if err != nil {
			return
		}
		if len(b) > MaxProgressFileSize {
			t.Fatalf("parsed %d bytes", len(b))
		}
		if err := CheckProgress(p); err != nil {
			t.Fatalf("ParseProgress(%q) = %+v: %v", b, p, err)
		}
	})
}
