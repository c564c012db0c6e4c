package client

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path"
	"strings"
)

// checkEnvArchive reads an --env archive through, before anything is
// uploaded: it must be a readable gzip-compressed tar holding a Python
// environment at its root (bin/python or bin/python3, as tfyarn pack and
// conda-pack lay it out), else every task would fail at localization.
func checkEnvArchive(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return invalidf("env %s: %v", p, unwrapPathError(err))
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return invalidf("env %s is not a gzip-compressed tar archive (%v); make one with tfyarn pack DIR -o env.tar.gz", p, gzipCause(err))
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	python := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return invalidf("env %s cannot be unpacked (%v); make it again with tfyarn pack DIR -o env.tar.gz", p, gzipCause(err))
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if name == "bin/python" || name == "bin/python3" {
			python = true
		}
		// Read the content through: a corrupt stream shows only there.
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return invalidf("env %s cannot be unpacked (%v at %s); make it again with tfyarn pack DIR -o env.tar.gz", p, gzipCause(err), h.Name)
		}
	}
	if !python {
		return invalidf("env %s holds no Python environment (no bin/python or bin/python3 at its root); make it with tfyarn pack DIR -o env.tar.gz", p)
	}
	return nil
}

func gzipCause(err error) string {
	switch {
	case errors.Is(err, gzip.ErrHeader):
		return "gzip: not in gzip format"
	case errors.Is(err, gzip.ErrChecksum):
		return "gzip: checksum error"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "truncated"
	}
	return err.Error()
}
