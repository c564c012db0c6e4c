package nodemanager

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeNM answers like a Hadoop 3.4 NodeManager (the header and the
// "running container" footer are copied from a real answer) for one file
// whose content the test grows.
type fakeNM struct {
	mu   sync.Mutex
	data []byte
}

func (f *fakeNM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !strings.HasSuffix(r.URL.Path, "/logs/stdout") {
		http.Error(w, "java.lang.Exception: Unknown container. Container either has not started or has already completed or doesn't belong to this node at all.", 404)
		return
	}
	content := f.data
	if s := r.URL.Query().Get("size"); s != "" {
		n, _ := strconv.ParseInt(s, 10, 64)
		if n < 0 && -n < int64(len(content)) {
			content = content[int64(len(content))+n:]
		}
	}
	c := "Container: container_1_0001_01_000002 on localhost:43767"
	fmt.Fprintf(w, "%s\nLogAggregationType: LOCAL\n%s\nLogType:stdout\nLogLastModifiedTime:Mon Nov 23 18:29:48 +0000 2026\nLogLength:%d\nLogContents:\n%sEnd of LogType:stdout.This log file belongs to a running container (container_1_0001_01_000002) and so may not be complete.\n%s\n\n",
		c, strings.Repeat("=", len(c)), len(f.data), content, strings.Repeat("*", 71))
}

func (f *fakeNM) write(s string) {
	f.mu.Lock()
	f.data = append(f.data, s...)
	f.mu.Unlock()
}

func TestFollowerStitchesPieces(t *testing.T) {
	nm := &fakeNM{}
	srv := httptest.NewServer(nm)
	defer srv.Close()
	c := New("alice")
	host := strings.TrimPrefix(srv.URL, "http://")
	f := c.Follow(host, "container_1_0001_01_000002", "stdout", 0)
	var got bytes.Buffer
	var want strings.Builder
	for i := 0; i < 50; i++ {
		// Some polls see nothing new, some a little, one more than the
		// follower's window (it must widen it, not skip).
		n := i % 3
		if i == 20 {
			n = 5000
		}
		for j := 0; j < n; j++ {
			line := fmt.Sprintf("line %d.%d\n", i, j)
			nm.write(line)
			want.WriteString(line)
		}
		data, err := f.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got.Write(data)
	}
	if got.String() != want.String() {
		t.Fatalf("followed %d bytes, want %d; first difference at %d", got.Len(), want.Len(), firstDiff(got.String(), want.String()))
	}
	if _, err := c.Tail(context.Background(), host, "container_1_0001_01_000002", "stderr", 10); !UnknownContainer(err) {
		t.Fatalf("unknown file: got %v, want an unknown-container error", err)
	}
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestParseListingRealAnswer(t *testing.T) {
	// A real Hadoop 3.4.2 NodeManager's answer (trimmed to three files).
	body := `{"containerLogsInfo":{"containerLogInfo":[{"fileName":"launch_container.sh","fileSize":"4364","lastModifiedTime":"Mon Nov 23 18:29:36 +0000 2026"},{"fileName":"stderr","fileSize":"181","lastModifiedTime":"Mon Nov 23 18:29:48 +0000 2026"},{"fileName":"stdout","fileSize":"49","lastModifiedTime":"Mon Nov 23 18:29:48 +0000 2026"}],"logAggregationType":"LOCAL","containerId":"container_1795458096169_0009_01_000002","nodeId":"localhost:43767"}}`
	files, err := parseListing([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || files[2].Name != "stdout" || files[2].Size != 49 || files[1].Modified != "Mon Nov 23 18:29:48 +0000 2026" {
		t.Fatalf("got %+v", files)
	}
}

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc", 2, "b\nc"},
		{"a\nb\n", 5, "a\nb\n"},
		{"a\n", 0, ""},
		{"", 3, ""},
	} {
		if got := string(LastLines([]byte(tc.in), tc.n)); got != tc.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func FuzzParsePiece(f *testing.F) {
	f.Add([]byte("Container: c on n\nLogAggregationType: LOCAL\n===\nLogType:stdout\nLogLastModifiedTime:x\nLogLength:5\nLogContents:\nhello\nEnd of LogType:stdout\n"), int64(3))
	f.Fuzz(func(t *testing.T, body []byte, max int64) {
		if max <= 0 {
			max = 1
		}
		p, err := parsePiece(body, max)
		if err == nil && (int64(len(p.Data)) > max || p.Offset < 0 || p.Offset+int64(len(p.Data)) != p.Length) {
			t.Fatalf("inconsistent piece: offset %d, %d bytes, length %d", p.Offset, len(p.Data), p.Length)
		}
	})
}

func FuzzParseListing(f *testing.F) {
	f.Add([]byte(`{"containerLogsInfo":{"containerLogInfo":[{"fileName":"stdout","fileSize":"49","lastModifiedTime":"x"}],"logAggregationType":"LOCAL"}}`))
	f.Add([]byte(`{"containerLogsInfo":[{"containerLogInfo":{"fileName":"stdout","fileSize":"1"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		files, err := parseListing(body)
		for _, fi := range files {
			if err == nil && fi.Size < 0 {
				t.Fatalf("negative size %+v", fi)
			}
		}
	})
}

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Status: 500, Msg: "javax.servlet.ServletException: java.lang.NoClassDefFoundError: Could not initialize class org.apache.hadoop.io.SecureIOUtils"}, "without Hadoop's native library"},
		{&Error{Status: 500, Msg: "javax.servlet.ServletException: javax.servlet.ServletException: java.lang.ExceptionInInitializerError"}, "without Hadoop's native library"},
		{&Error{Status: 401, Msg: "Authentication required"}, "SPNEGO"},
	} {
		if got := Explain(tc.err).Error(); !strings.Contains(got, tc.want) {
			t.Errorf("Explain(%v) = %q, want it to say %q", tc.err, got, tc.want)
		}
	}
	if got := Explain(&Error{Status: 503, Msg: "x"}).Error(); strings.Contains(got, "(") {
		t.Errorf("other errors are left alone: %q", got)
	}
}
