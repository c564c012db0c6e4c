package aggregated

import (
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"time"
)

// File is one log file of one container, as aggregated.
type File struct {
	Container string // container_..._000002
	Name      string // stdout, stderr, launch_container.sh, ...
	Length    int64
	// Content yields exactly Length bytes (io.ErrUnexpectedEOF if the
	// file holds fewer). It is valid only during the callback.
	Content io.Reader
	// Modified is the log file's modification time where the format
	// keeps it (IFile); zero for TFile, whose files share the node file's.
	Modified time.Time
}

// Keys AggregatedLogFormat reserves for the file's own metadata.
var reservedKeys = map[string]bool{"VERSION": true, "APPLICATION_OWNER": true, "APPLICATION_ACL": true}

// maxLogLength bounds a declared log length (1 TiB): beyond is corruption.
const maxLogLength = 1 << 40

// ReadTFile reads a TFile-format aggregated log (one node's file under the
// application's remote log directory) and calls fn for every container's
// log file, in the file's order. fn returning ErrStop ends the scan
// without error.
func ReadTFile(r io.ReaderAt, size int64, fn func(File) error) error {
	t, err := OpenTFile(r, size)
	if err != nil {
		return err
	}
	err = t.Scan(func(key []byte, value io.Reader) error {
		if len(key) < 2 || int(binary.BigEndian.Uint16(key)) != len(key)-2 {
			return &FormatError{"aggregated log key", "not a Java UTF string"}
		}
		k := string(key[2:])
		if reservedKeys[k] {
			return nil
		}
		return readContainer(k, value, fn)
	})
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// ErrStop, returned by a callback, ends a scan early without error.
var ErrStop = errStop

// readContainer reads AggregatedLogFormat.LogValue: for each file its name
// and its length (both Java UTF strings) and its bytes.
func readContainer(container string, v io.Reader, fn func(File) error) error {
	for {
		name, err := readUTF(v)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &FormatError{"aggregated log of " + container, "file name: " + err.Error()}
		}
		ls, err := readUTF(v)
		if err != nil {
			return &FormatError{"aggregated log of " + container, name + ": length: " + noEOF(err).Error()}
		}
		n, err := strconv.ParseInt(ls, 10, 64)
		if err != nil || n < 0 || n > maxLogLength {
			return &FormatError{"aggregated log of " + container, name + ": length " + strconv.Quote(ls) + " is not a length"}
		}
		content := &exactReader{r: v, n: n}
		if err := fn(File{Container: container, Name: name, Length: n, Content: content}); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, content); err != nil {
			return &FormatError{"aggregated log of " + container, name + ": " + err.Error()}
		}
	}
}

// exactReader reads n bytes from r, failing if r ends sooner.
type exactReader struct {
	r io.Reader
	n int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	n, err := e.r.Read(p)
	e.n -= int64(n)
	if err == io.EOF {
		if e.n > 0 {
			return n, io.ErrUnexpectedEOF
		}
		err = nil
	}
	return n, err
}
