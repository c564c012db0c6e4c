// Package release writes what `make release` puts into dist/: the tarballs, the Python wheels,
// the SBOMs and SHA256SUMS. Every writer is a function of its inputs alone (times come from the
// commit, never from the clock; entries are sorted; owners and modes are fixed), so two builds of
// one commit give the same bytes.
package release

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"regexp"
	"sort"
	"time"
)

// File is one file of an archive: its path inside it, its mode bits and its content.
type File struct {
	Name string
	Mode int64
	Data []byte
}

// versionPattern is X.Y.Z with an optional pre-release that pip orders the same way
// (alpha/beta/rc and a number: 1.2.0-rc1 is the wheel's 1.2.0rc1).
var versionPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-(alpha|beta|rc)\.?([0-9]+))?$`)

// CheckVersion says what is wrong with a release version, or nil.
func CheckVersion(v string) error {
	if v == "" {
		return fmt.Errorf("no version: run make release VERSION=X.Y.Z (for example VERSION=0.1.0)")
	}
	if !versionPattern.MatchString(v) {
		return fmt.Errorf("version %q is not X.Y.Z or X.Y.Z-rcN (also -alphaN, -betaN): run make release VERSION=X.Y.Z", v)
	}
	return nil
}

// WriteTarGz writes files, sorted by name, as a gzip-compressed tar: owner root (0/0), the given
// modes, every time mtime, and a gzip header without a name or time.
func WriteTarGz(w io.Writer, files []File, mtime time.Time) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, f := range sortedFiles(files) {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg, Name: f.Name, Mode: f.Mode, Size: int64(len(f.Data)),
			ModTime: mtime.UTC(), Uname: "root", Gname: "root", Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func sortedFiles(files []File) []File {
	out := append([]File(nil), files...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
