package aggregated

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// Each fixture is an aggregated log written by Hadoop 3.4.2 and the .yarnlogs
// beside it what Hadoop's `yarn logs -applicationId` printed for it:
// tfile-none by a NodeManager of the test cluster (uncompressed, one AM and
// two task containers), tfile-gz by AggregatedLogFormat.LogWriter with
// compression gz (gen-tfile.jsh; a 3,000-line stdout spans several zlib
// streams), read back by `yarn logs` from HDFS.
func TestPrintMatchesYarnLogs(t *testing.T) {
	for _, tc := range []struct {
		file, node string
		mod        time.Time
	}{
		{"tfile-none", "localhost_38471", time.Date(2026, 11, 23, 18, 22, 33, 0, time.UTC)},
		{"tfile-gz", "node-a_1234", time.Date(2026, 11, 23, 18, 25, 18, 0, time.UTC)},
	} {
		data, err := os.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile("testdata/" + tc.file + ".yarnlogs")
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := Print(&got, bytes.NewReader(data), int64(len(data)), tc.node, tc.mod, nil, nil); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%s: output differs from yarn logs:\n%s", tc.file, firstDiff(got.String(), string(want)))
		}
	}
}

// ifile-none and ifile-gz were written by Hadoop 3.4.2's
// LogAggregationIndexedFileController (gen-ifile.jsh: three containers,
// compression none and gz) and read back by `yarn logs` from HDFS with
// yarn.log-aggregation.file-formats=IFile,TFile.
func TestPrintIFileMatchesYarnLogs(t *testing.T) {
	// The fixtures' times were printed in UTC; the index keeps instants.
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC
	for _, file := range []string{"ifile-none", "ifile-gz"} {
		data, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile("testdata/" + file + ".yarnlogs")
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := PrintIFile(&got, bytes.NewReader(data), int64(len(data)), "node-b_4321", nil, nil); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%s: output differs from yarn logs:\n%s", file, firstDiff(got.String(), string(want)))
		}
	}
}

func TestReadTFileContainersAndFiles(t *testing.T) {
	data, err := os.ReadFile("testdata/tfile-none")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = ReadTFile(bytes.NewReader(data), int64(len(data)), func(f File) error {
		if f.Name == "stdout" {
			var b bytes.Buffer
			b.ReadFrom(f.Content)
			got = append(got, f.Container[len(f.Container)-6:]+" "+strings.TrimSpace(strings.SplitN(b.String(), "\n", 2)[0]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"000003 hello from worker:1", "000002 hello from worker:0"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("stdout files: got %q, want %q", got, want)
	}
}

func TestCorruptFilesFail(t *testing.T) {
	data, err := os.ReadFile("testdata/tfile-none")
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string][]byte{
		"empty":     nil,
		"no magic":  append(append([]byte{}, data[:len(data)-1]...), 0),
		"truncated": data[len(data)/2:],
		"cut index": append(append([]byte{}, data[:len(data)-tailLen-3]...), data[len(data)-tailLen:]...),
	} {
		err := ReadTFile(bytes.NewReader(d), int64(len(d)), func(File) error { return nil })
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestVLongRoundTrip(t *testing.T) {
	for _, v := range []int64{0, 1, -1, -32, -33, 127, 128, -5120, 5119, 5120, 1 << 20, -(1 << 20), 1<<31 - 1, -(1 << 31), 1 << 40, 1<<63 - 1, -(1 << 63)} {
		enc := writeVLong(v)
		got, err := readVLong(bytes.NewReader(enc))
		if err != nil || got != v {
			t.Errorf("%d: encoded %x, decoded %d, %v", v, enc, got, err)
		}
	}
}

// writeVLong is Hadoop's Utils.writeVLong, for tests.
func writeVLong(n int64) []byte {
	if n < 128 && n >= -32 {
		return []byte{byte(n)}
	}
	un := n
	if n < 0 {
		un = ^n
	}
	l := (64-leadingZeros(uint64(un)))/8 + 1
	first := n >> ((l - 1) * 8)
	switch {
	case l <= 2 && first>>(8*(2-l)) < 20 && first>>(8*(2-l)) >= -20:
		f := n >> 8
		return []byte{byte(f - 52), byte(n)}
	case l <= 3 && n>>16 < 16 && n>>16 >= -16:
		return []byte{byte((n >> 16) - 88), byte(n >> 8), byte(n)}
	case l <= 4 && n>>24 < 8 && n>>24 >= -8:
		return []byte{byte((n >> 24) - 112), byte(n >> 16), byte(n >> 8), byte(n)}
	}
	if l < 4 {
		l = 4
	}
	out := []byte{byte(l - 129)}
	for i := l - 1; i >= 0; i-- {
		out = append(out, byte(n>>(8*i)))
	}
	return out
}

func leadingZeros(x uint64) int {
	n := 0
	for i := 63; i >= 0 && x&(1<<uint(i)) == 0; i-- {
		n++
	}
	return n
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + itoa(int64(i+1)) + ":\n got: " + a + "\nwant: " + b
		}
	}
	return "(same lines, different bytes)"
}
