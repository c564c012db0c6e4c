package security

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Format is the token storage version byte that follows the "HDTS" magic.
type Format byte

const (
	// FormatWritable (version 0) is Hadoop's Writable encoding. Hadoop 3
	// still writes it by default, for files and for the ByteBuffer in
	// ContainerLaunchContext, because every Hadoop version reads it.
	FormatWritable Format = 0
	// FormatProtobuf (version 1) is a length-delimited CredentialsProto.
	FormatProtobuf Format = 1
)

func (f Format) String() string {
	switch f {
	case FormatWritable:
		return "writable(v0)"
	case FormatProtobuf:
		return "protobuf(v1)"
	}
	return fmt.Sprintf("unknown(v%d)", byte(f))
}

var magic = []byte("HDTS")

const (
	// maxFieldLen bounds any single alias, identifier, password, kind,
	// service or secret. Real ones are well under a KiB; the bound keeps a
	// corrupt length from turning into a giant allocation.
	maxFieldLen = 1 << 20
	// maxStorageLen bounds what ReadCredentials will buffer.
	maxStorageLen = 64 << 20
)

// ParseCredentials decodes token storage in either format.
func ParseCredentials(b []byte) (*Credentials, error) {
	if len(b) < len(magic)+1 {
		return nil, formatErr("", "%d bytes is too short for a token storage header", len(b))
	}
	if !bytes.Equal(b[:len(magic)], magic) {
		return nil, formatErr("", "bad header %q, want \"HDTS\"", b[:len(magic)])
	}
	body := b[len(magic)+1:]
	switch f := Format(b[len(magic)]); f {
	case FormatWritable:
		return parseWritable(body)
	case FormatProtobuf:
		return parseProto(body)
	default:
		return nil, formatErr("", "unknown token storage version %d", byte(f))
	}
}

// ReadCredentials reads r to EOF (at most 64 MiB) and decodes it.
func ReadCredentials(r io.Reader) (*Credentials, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxStorageLen+1))
	if err != nil {
		return nil, fmt.Errorf("security: credentials: read: %w", err)
	}
	if len(b) > maxStorageLen {
		return nil, formatErr("", "token storage exceeds %d bytes", maxStorageLen)
	}
	return ParseCredentials(b)
}

// ReadCredentialsFile reads a token storage file, e.g. the one named by
// HADOOP_TOKEN_FILE_LOCATION.
func ReadCredentialsFile(path string) (*Credentials, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("security: credentials: %w", err)
	}
	defer f.Close()
	c, err := ReadCredentials(f)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return c, nil
}

// Marshal encodes c in the Writable format (version 0), what goes into
// ContainerLaunchContextProto.tokens.
func (c *Credentials) Marshal() []byte {
	b, _ := c.MarshalFormat(FormatWritable)
	return b
}

// MarshalFormat encodes c in the given format.
func (c *Credentials) MarshalFormat(f Format) ([]byte, error) {
	b := append([]byte(nil), magic...)
	b = append(b, byte(f))
	switch f {
	case FormatWritable:
		return c.appendWritable(b), nil
	case FormatProtobuf:
		return c.appendProto(b), nil
	}
	return nil, fmt.Errorf("security: credentials: cannot write %s", f)
}

// WriteTo writes the Writable encoding to w (io.WriterTo).
func (c *Credentials) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(c.Marshal())
	return int64(n), err
}

// WriteFile writes c to path in format f, readable only by the owner
// because the file holds secrets.
func (c *Credentials) WriteFile(path string, f Format) error {
	b, err := c.MarshalFormat(f)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("security: credentials: %w", err)
	}
	return nil
}
