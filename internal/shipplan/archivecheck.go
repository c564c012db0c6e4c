package shipplan

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// checkArchive reads an --archives file through before anything is
// uploaded, as the NodeManager will unpack it (by its suffix: a zip for
// .zip and .jar, a tar for .tar, a gzip-compressed tar for .tar.gz and
// .tgz): a file that is not one would be submitted and fail every task at
// localization, leaving the upload in the cache.
func checkArchive(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return invalidf("archive %s: %v", p, unwrapPathError(err))
	}
	defer f.Close()
	bad := func(kind string, err error) error {
		return invalidf("archive %s is not a readable %s (%s); fix it, or ship the file as it is with --files", p, kind, err)
	}
	switch strings.ToLower(archiveSuffix(p, archiveSuffixes)) {
	case ".zip", ".jar":
		st, err := f.Stat()
		if err != nil {
			return invalidf("archive %s: %v", p, unwrapPathError(err))
		}
		zr, err := zip.NewReader(f, st.Size())
		if err != nil {
			return bad("zip archive", err)
		}
		for _, e := range zr.File {
			if err := readZipEntry(e); err != nil {
				return bad("zip archive", fmt.Errorf("%v at %s", err, e.Name))
			}
		}
	case ".tar":
		if err := readTar(f); err != nil {
			return bad("tar archive", err)
		}
	default: // .tar.gz, .tgz
		zr, err := gzip.NewReader(f)
		if err != nil {
			return bad("gzip-compressed tar archive", errors.New(gzipCause(err)))
		}
		defer zr.Close()
		if err := readTar(zr); err != nil {
			return bad("gzip-compressed tar archive", errors.New(gzipCause(err)))
		}
	}
	return nil
}

// readZipEntry reads one entry through: its checksum is checked at its end.
func readZipEntry(e *zip.File) error {
	r, err := e.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(io.Discard, r)
	return err
}

// readTar reads a tar stream through, contents included: a corrupt or
// truncated stream shows only there. An empty stream is no archive.
func readTar(r io.Reader) error {
	tr := tar.NewReader(r)
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if n == 0 {
				return errors.New("no entries")
			}
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return fmt.Errorf("%w at %s", err, h.Name)
		}
	}
}
