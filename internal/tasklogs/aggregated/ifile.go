package aggregated

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"sort"
	"time"
	"unicode/utf16"
)

// The IFile format (LogAggregationIndexedFileController): an id at the
// start and the end (32 bytes since Hadoop 3.3, a 36-character UUID
// before), each log file's bytes (compressed or not) in between, and at the
// end a Java-serialized IndexedLogsMeta and its length: for each
// aggregation cycle, for each container, its files' names, sizes,
// modification times and offsets.

// maxIndexMeta bounds the serialized index read into memory.
const maxIndexMeta = 64 << 20

// ifileEntry is one log file the index describes.
type ifileEntry struct {
	container, name          string
	size, compressed, offset int64
	modified                 int64 // ms since the epoch
}

// ReadIFile reads an IFile-format aggregated log and calls fn for every
// log file in the order `yarn logs` prints them; File.Modified is the log
// file's own modification time.
func ReadIFile(r io.ReaderAt, size int64, fn func(File) error) error {
	entries, comp, err := readIFileIndex(r, size)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.offset < 0 || e.compressed < 0 || e.offset > size || e.compressed > size-e.offset || e.size < 0 || e.size > maxLogLength {
			return &FormatError{"IFile index", e.container + " " + e.name + ": region outside the file"}
		}
		sec := io.NewSectionReader(r, e.offset, e.compressed)
		var content io.Reader = sec
		if comp == compressGz {
			content = &zlibStreams{r: bufio.NewReader(sec)}
		}
		f := File{Container: e.container, Name: e.name, Length: e.size, Content: io.LimitReader(content, e.size),
			Modified: time.UnixMilli(e.modified)}
		if err := fn(f); err != nil {
			if err == ErrStop {
				return nil
			}
			return err
		}
	}
	return nil
}

func readIFileIndex(r io.ReaderAt, size int64) ([]ifileEntry, string, error) {
	idLen := int64(0)
	for _, n := range []int64{32, 36} {
		if size < 2*n+4 {
			continue
		}
		head, tail := make([]byte, n), make([]byte, n)
		if _, err := r.ReadAt(head, 0); err != nil {
			return nil, "", noEOF(err)
		}
		if _, err := r.ReadAt(tail, size-n); err != nil {
			return nil, "", noEOF(err)
		}
		if bytes.Equal(head, tail) {
			idLen = n
			break
		}
	}
	if idLen == 0 {
		return nil, "", &FormatError{"IFile", "no matching id at the start and the end (not an IFile)"}
	}
	var l [4]byte
	if _, err := r.ReadAt(l[:], size-idLen-4); err != nil {
		return nil, "", noEOF(err)
	}
	n := int64(int32(binary.BigEndian.Uint32(l[:])))
	if n <= 0 || n > maxIndexMeta || n > size-2*idLen-4 {
		return nil, "", &FormatError{"IFile", "index length " + itoa(n) + " out of range"}
	}
	meta := make([]byte, n)
	if _, err := r.ReadAt(meta, size-idLen-4-n); err != nil {
		return nil, "", noEOF(err)
	}
	v, err := readJava(meta)
	if err != nil {
		return nil, "", err
	}
	root, ok := v.(*jobject)
	if !ok {
		return nil, "", &FormatError{"IFile index", "not an object"}
	}
	comp, _ := root.fields["compressName"].(string)
	if err := checkCompression(comp); err != nil {
		return nil, "", err
	}
	var out []ifileEntry
	for _, cycle := range listElems(root.fields["logMetas"]) {
		co, ok := cycle.(*jobject)
		if !ok {
			return nil, "", &FormatError{"IFile index", "aggregation cycle is not an object"}
		}
		for _, kv := range javaHashMapOrder(co.fields["logMetas"]) {
			for _, fv := range listElems(kv[1]) {
				fo, ok := fv.(*jobject)
				if !ok {
					return nil, "", &FormatError{"IFile index", "file entry is not an object"}
				}
				e := ifileEntry{}
				e.container, _ = fo.fields["containerId"].(string)
				e.name, _ = fo.fields["fileName"].(string)
				e.size, _ = fo.fields["fileSize"].(int64)
				e.compressed, _ = fo.fields["fileCompressedSize"].(int64)
				e.offset, _ = fo.fields["startIndex"].(int64)
				if t, ok := fo.fields["lastModifiedTime"].(int64); ok {
					e.modified = t
				} else {
					e.modified, _ = fo.fields["lastModificatedTime"].(int64) // Hadoop before 3.3
				}
				out = append(out, e)
			}
		}
	}
	return out, comp, nil
}

// listElems is an ArrayList's elements (after its blockdata).
func listElems(v any) []any {
	o, ok := v.(*jobject)
	if !ok {
		return nil
	}
	a := o.extra["java.util.ArrayList"]
	var out []any
	for _, x := range a {
		if _, isData := x.([]byte); !isData {
			out = append(out, x)
		}
	}
	return out
}

// javaHashMapOrder is a HashMap's entries in the order Java iterates the
// map it deserializes: by bucket of the key's String.hashCode in a table
// sized as HashMap.readObject sizes it, then in stream order.
func javaHashMapOrder(v any) [][2]any {
	o, ok := v.(*jobject)
	if !ok {
		return nil
	}
	var items []any
	for _, x := range o.extra["java.util.HashMap"] {
		if _, isData := x.([]byte); !isData {
			items = append(items, x)
		}
	}
	var kvs [][2]any
	for i := 0; i+1 < len(items); i += 2 {
		kvs = append(kvs, [2]any{items[i], items[i+1]})
	}
	lf, _ := o.fields["loadFactor"].(float64)
	lf = math.Min(math.Max(0.25, lf), 4)
	fc := float32(len(kvs))/float32(lf) + 1
	tab := 16
	if fc >= 16 {
		tab = tableSizeFor(int(fc))
	}
	bucket := func(k any) int {
		s, _ := k.(string)
		h := javaStringHash(s)
		return int((h ^ int32(uint32(h)>>16)) & int32(tab-1))
	}
	sort.SliceStable(kvs, func(i, j int) bool { return bucket(kvs[i][0]) < bucket(kvs[j][0]) })
	return kvs
}

func tableSizeFor(c int) int {
	n := 1
	for n < c && n < 1<<30 {
		n <<= 1
	}
	return n
}

// javaStringHash is String.hashCode: over UTF-16 code units, wrapping.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}
