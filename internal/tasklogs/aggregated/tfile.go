package aggregated

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// FormatError says what in a file does not follow the format.
type FormatError struct {
	What   string // the structure, e.g. "TFile tail"
	Detail string
}

func (e *FormatError) Error() string { return "aggregated: " + e.What + ": " + e.Detail }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// bcfileMagic ends every BCFile (the container format of a TFile).
var bcfileMagic = []byte{0xd1, 0x11, 0xd3, 0x68, 0x91, 0xb5, 0xd7, 0xb6, 0x39, 0xdf, 0x41, 0x40, 0x92, 0xba, 0xe1, 0x50}

// Bounds on what a file may declare. Hadoop writes a handful of meta
// blocks, names of a few bytes and keys below TFile's 64 KiB maximum.
const (
	maxMetaBlocks = 1024
	maxNameLen    = 1024
	maxKeyLen     = 64 << 10
	// maxIndexBytes bounds the meta index and the data index, read whole.
	maxIndexBytes = 16 << 20
	tailLen       = 8 + 4 + 16 // meta index offset, version, magic
)

// Compression names BCFile uses.
const (
	compressNone = "none"
	compressGz   = "gz"
)

type region struct{ offset, compressed, raw int64 }

// TFile is an opened TFile: its data blocks, in file order.
type TFile struct {
	r           io.ReaderAt
	size        int64
	compression string
	blocks      []region
}

// OpenTFile reads a TFile's tail, meta index and data index.
func OpenTFile(r io.ReaderAt, size int64) (*TFile, error) {
	if size < tailLen {
		return nil, &FormatError{"TFile", "file of " + itoa(size) + " bytes is too short"}
	}
	var tail [tailLen]byte
	if _, err := r.ReadAt(tail[:], size-tailLen); err != nil {
		return nil, fmt.Errorf("aggregated: reading the TFile tail: %w", noEOF(err))
	}
	if !bytes.Equal(tail[12:], bcfileMagic) {
		return nil, &FormatError{"TFile tail", "no BCFile magic (not a TFile)"}
	}
	if major := binary.BigEndian.Uint16(tail[8:]); major != 1 {
		return nil, &FormatError{"TFile tail", "BCFile version " + itoa(int64(major)) + " (only 1 is known)"}
	}
	metaOff := int64(binary.BigEndian.Uint64(tail[:8]))
	metaEnd := size - tailLen
	if metaOff < 0 || metaOff > metaEnd || metaEnd-metaOff > maxIndexBytes {
		return nil, &FormatError{"TFile tail", "meta index offset " + itoa(metaOff) + " outside the file"}
	}
	mr := bufio.NewReader(io.NewSectionReader(r, metaOff, metaEnd-metaOff))
	n, err := readVInt(mr, 0, maxMetaBlocks, "meta index count")
	if err != nil {
		return nil, err
	}
	t := &TFile{r: r, size: size}
	var dataIndex *region
	var dataIndexComp string
	for i := int64(0); i < n; i++ {
		name, err := readString(mr, maxNameLen, "meta block name")
		if err != nil {
			return nil, err
		}
		comp, err := readString(mr, maxNameLen, "meta block compression")
		if err != nil {
			return nil, err
		}
		reg, err := t.readRegion(mr)
		if err != nil {
			return nil, err
		}
		if name == "data:BCFile.index" {
			dataIndex, dataIndexComp = &reg, comp
		}
	}
	if dataIndex == nil {
		return nil, &FormatError{"TFile meta index", "no BCFile.index block"}
	}
	if dataIndex.raw > maxIndexBytes {
		return nil, &FormatError{"TFile data index", "raw size " + itoa(dataIndex.raw) + " too large"}
	}
	br, err := t.block(*dataIndex, dataIndexComp)
	if err != nil {
		return nil, err
	}
	ir := bufio.NewReader(br)
	if t.compression, err = readString(ir, maxNameLen, "data compression"); err != nil {
		return nil, err
	}
	if err := checkCompression(t.compression); err != nil {
		return nil, err
	}
	// Each region takes at least 3 bytes of the index.
	nb, err := readVInt(ir, 0, dataIndex.raw/3, "data block count")
	if err != nil {
		return nil, err
	}
	// Grown as regions are read: a count alone allocates nothing.
	t.blocks = make([]region, 0, min(nb, 1024))
	for i := int64(0); i < nb; i++ {
		reg, err := t.readRegion(ir)
		if err != nil {
			return nil, err
		}
		t.blocks = append(t.blocks, reg)
	}
	return t, nil
}

func (t *TFile) readRegion(r io.ByteReader) (region, error) {
	var reg region
	var err error
	if reg.offset, err = readVInt(r, 0, t.size, "block offset"); err != nil {
		return reg, err
	}
	if reg.compressed, err = readVInt(r, 0, t.size-reg.offset, "block compressed size"); err != nil {
		return reg, err
	}
	// Raw sizes are not bounded by the file (compression); they bound
	// what is read from the block instead.
	if reg.raw, err = readVInt(r, 0, 1<<50, "block raw size"); err != nil {
		return reg, err
	}
	return reg, nil
}

func checkCompression(c string) error {
	if c != compressNone && c != compressGz {
		return &FormatError{"TFile", "compression " + strconv.Quote(c) + " is not supported (none and gz are)"}
	}
	return nil
}

// block is the uncompressed content of one block, at most its raw size.
func (t *TFile) block(reg region, comp string) (io.Reader, error) {
	if err := checkCompression(comp); err != nil {
		return nil, err
	}
	sec := io.NewSectionReader(t.r, reg.offset, reg.compressed)
	if comp == compressNone {
		return io.LimitReader(sec, reg.raw), nil
	}
	return io.LimitReader(&zlibStreams{r: bufio.NewReader(sec)}, reg.raw), nil
}

// zlibStreams reads one or more zlib streams back to back: Hadoop's
// compressed block writer finishes a stream on every flush.
type zlibStreams struct {
	r   *bufio.Reader
	cur io.ReadCloser
}

func (z *zlibStreams) Read(p []byte) (int, error) {
	for {
		if z.cur == nil {
			if _, err := z.r.Peek(1); err != nil {
				return 0, io.EOF
			}
			zr, err := zlib.NewReader(z.r)
			if err != nil {
				return 0, &FormatError{"TFile gz block", err.Error()}
			}
			z.cur = zr
		}
		n, err := z.cur.Read(p)
		if err == io.EOF {
			z.cur.Close()
			z.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		if err != nil {
			return n, &FormatError{"TFile gz block", err.Error()}
		}
		return n, nil
	}
}

// Scan calls fn with every key and value, in file order. The value is
// valid only until fn returns; what fn leaves unread is skipped.
func (t *TFile) Scan(fn func(key []byte, value io.Reader) error) error {
	for _, reg := range t.blocks {
		var r blockReader
		if t.compression == compressNone {
			// Uncompressed: what a reader skips is not read (skip.go).
			r = newPosReader(t.r, reg.offset, min(reg.compressed, reg.raw), 64<<10)
		} else {
			br, err := t.block(reg, t.compression)
			if err != nil {
				return err
			}
			r = bufio.NewReaderSize(br, 64<<10)
		}
		for {
			if _, err := r.Peek(1); err != nil {
				if err == io.EOF {
					break
				}
				return err
			}
			kl, err := readVInt(r, 0, maxKeyLen, "key length")
			if err != nil {
				return err
			}
			key := make([]byte, kl)
			if _, err := io.ReadFull(r, key); err != nil {
				return noEOF(err)
			}
			v := &chunkReader{r: r}
			if err := fn(key, v); err != nil {
				return err
			}
			if _, err := io.Copy(io.Discard, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// chunkReader decodes a TFile value: chunks, each a vint length (negative:
// more chunks follow) and that many bytes.
type chunkReader struct {
	r      blockReader
	remain int64
	last   bool
	begun  bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for c.remain == 0 {
		if c.begun && c.last {
			return 0, io.EOF
		}
		n, err := readVInt(c.r, -(1 << 31), 1<<31-1, "value chunk length")
		if err != nil {
			return 0, err
		}
		c.begun = true
		c.last = n >= 0
		if n < 0 {
			n = -n
		}
		c.remain = n
	}
	if int64(len(p)) > c.remain {
		p = p[:c.remain]
	}
	n, err := c.r.Read(p)
	c.remain -= int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

var errStop = errors.New("stop")
