// Package pythonsdk carries tfyarn's Python package (the directory tfyarn/ next to this file) inside
// the binary: the release's wheel takes its files from here, and every task's launcher (YARN's
// containers and run --local) puts them first on the program's PYTHONPATH after the job's source
// directory, so `import tfyarn` works in every task whatever the job's environment holds.
package pythonsdk

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/tfyarn/tfyarn/internal/atomicfile"
)

// tree is the package's source. "all:" keeps __init__.py (embed leaves out names starting with _
// otherwise); Files drops what an interpreter or editor left beside the sources.
//
//go:embed all:tfyarn
var tree embed.FS

// Package is the name of the Python package, and of its directory in a wheel or on PYTHONPATH.
const Package = "tfyarn"

// VersionFile is the module the release or the launcher writes into the package: the version
// pip knows (PEP 440) and the binary's own (`tfyarn version`), which the SDK compares with the
// binary it drives.
const VersionFile = "_version.py"

// File is one file of the package, Name relative to the package's parent (tfyarn/...).
type File struct {
	Name string
	Data []byte
}

// Files returns the package's sources in name order, without _version.py (see VersionSource),
// bytecode caches and hidden files.
func Files() []File {
	var out []File
	err := fs.WalkDir(tree, Package, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == "__pycache__" || (strings.HasPrefix(name, ".") && p != Package) {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".pyc") || p == path.Join(Package, VersionFile) {
			return nil
		}
		data, err := tree.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, File{Name: p, Data: data})
		return nil
	})
	if err != nil {
		// The tree is compiled in: a read error is a broken build, not a runtime condition.
		panic("pythonsdk: reading the embedded package: " + err.Error())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// VersionSource is _version.py for the binary version v (as `tfyarn version` prints it).
func VersionSource(v string) []byte {
	return []byte(fmt.Sprintf("# Written by tfyarn's release or launcher: the versions of this package and its binary.\n"+
		"__version__ = %q\n__binary_version__ = %q\n", PEP440(v), v))
}

// releaseVersion is X.Y.Z (Go's vX.Y.Z too) with an optional pre-release (-alphaN, -beta.N, -rcN).
var releaseVersion = regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-(alpha|beta|rc)\.?([0-9]+))?$`)

// PEP440 is v as pip writes it: 1.2.0-rc1 is 1.2.0rc1, 1.2.0-alpha.2 is 1.2.0a2; anything else
// (devel, a pseudo-version) is returned as it is.
func PEP440(v string) string {
	m := releaseVersion.FindStringSubmatch(v)
	if m == nil {
		return v
	}
	pre := map[string]string{"alpha": "a", "beta": "b", "rc": "rc"}[m[5]]
	return m[1] + "." + m[2] + "." + m[3] + pre + m[6]
}

// Extract writes the package for binary version v into dir/tfyarn, dir created private (0700) when
// missing. It writes each file whole (a temporary then a rename), so a launcher started again in
// the same working directory, or two at once, leave a complete package.
func Extract(dir, v string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("python package: %w", err)
	}
	files := append(Files(), File{Name: path.Join(Package, VersionFile), Data: VersionSource(v)})
	for _, f := range files {
		dst := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("python package: %w", err)
		}
		if err := atomicfile.Write(dst, f.Data, 0o644); err != nil {
			return fmt.Errorf("python package: %w", err)
		}
	}
	return nil
}
