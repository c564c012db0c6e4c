package shipplan

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"strings"

	"github.com/tfyarn/tfyarn/internal/envpack"
)

// maxManifestBytes bounds the envpack manifest read from an --env archive.
const maxManifestBytes = 16 << 20

// NeedsOwnCopy: an environment whose manifest lists text files naming
// the prefix it was packed at (a conda env) is rewritten in place by the
// task launcher on the node (envpack.Relocate). Such an env is localized
// PRIVATE, into the submitting user's own NodeManager cache, not PUBLIC:
// the NodeManager's public copy belongs to the NodeManager, and where
// containers run as their users (LinuxContainerExecutor) a task may not
// rewrite it, nor should one user's task rewrite what other users' tasks
// run.
func NeedsOwnCopy(m *envpack.Manifest) bool {
	// A venv's activate scripts name its prefix too, but nothing rewrites
	// them on the node (executor: conda envs only).
	return m != nil && m.Kind == envpack.KindConda && len(m.PrefixTextFiles) > 0
}

// checkEnvArchive reads an --env archive through, before anything is
// uploaded: it must be a readable gzip-compressed tar holding a Python
// environment at its root (bin/python or bin/python3, as tfyarn pack and
// conda-pack lay it out), else every task would fail at localization.
// It reports whether the archive's envpack manifest lists text files the
// launcher rewrites on the node (relocates, see NeedsOwnCopy).
func checkEnvArchive(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, invalidf("env %s: %v", p, unwrapPathError(err))
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return false, invalidf("env %s is not a gzip-compressed tar archive (%v); make one with tfyarn pack DIR -o env.tar.gz", p, gzipCause(err))
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	python, relocates := false, false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false, invalidf("env %s cannot be unpacked (%v); make it again with tfyarn pack DIR -o env.tar.gz", p, gzipCause(err))
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if name == envpack.ManifestName && h.Size <= maxManifestBytes {
			var m envpack.Manifest
			b, err := io.ReadAll(io.LimitReader(tr, maxManifestBytes))
			if err != nil {
				return false, invalidf("env %s cannot be unpacked (%v at %s); make it again with tfyarn pack DIR -o env.tar.gz", p, gzipCause(err), h.Name)
			}
			if json.Unmarshal(b, &m) == nil {
				relocates = NeedsOwnCopy(&m)
			}
		}
		if name == "bin/python" || name == "bin/python3" {
			python = true
		}
		// Read the content through: a corrupt stream shows only there.
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return false, invalidf("env %s cannot be unpacked (%v at %s); make it again with tfyarn pack DIR -o env.tar.gz", p, gzipCause(err), h.Name)
		}
	}
	if !python {
		return false, invalidf("env %s holds no Python environment (no bin/python or bin/python3 at its root); make it with tfyarn pack DIR -o env.tar.gz", p)
	}
	return relocates, nil
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
