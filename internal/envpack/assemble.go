package envpack

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// maxAssembleDepth bounds how deep Assemble merges directories that
// several layers share: PackLayers' layers meet a few levels down
// (lib/pythonX.Y/site-packages/ and a split distribution's directories).
const maxAssembleDepth = 32

// Assemble makes dst (which must not exist) the environment whose layers
// YARN unpacked into the directories layers (absolute, in any order): a
// directory present in several layers becomes a real directory merging
// them; anything present in one layer only becomes a symbolic link to it,
// except a symbolic link, which is copied as is (a relative one then
// resolves inside dst, as in the environment it was packed from). The result
// reads as the same tree as Pack's archive unpacked; it costs a directory
// read per shared directory and a link per entry, milliseconds even for
// TensorFlow. Two layers holding the same file is an error (PackLayers never
// makes such layers).
func Assemble(dst string, layers []string) error {
	if _, err := os.Lstat(dst); err == nil {
		return &Error{Op: "assemble", Path: dst, Err: fmt.Errorf("already exists")}
	}
	if err := merge(dst, layers, 0); err != nil {
		return &Error{Op: "assemble", Path: dst, Err: err}
	}
	return nil
}

func merge(dst string, srcs []string, depth int) error {
	if depth > maxAssembleDepth {
		return fmt.Errorf("layers share directories more than %d levels deep", maxAssembleDepth)
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	where := map[string][]string{} // name → the layer directories holding it
	for _, src := range srcs {
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			where[e.Name()] = append(where[e.Name()], src)
		}
	}
	names := make([]string, 0, len(where))
	for n := range where {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		holders := where[name]
		target := filepath.Join(dst, name)
		if len(holders) == 1 {
			src := filepath.Join(holders[0], name)
			st, err := os.Lstat(src)
			if err != nil {
				return err
			}
			link := src
			if st.Mode()&os.ModeSymlink != 0 {
				if link, err = os.Readlink(src); err != nil {
					return err
				}
			}
			if err := os.Symlink(link, target); err != nil {
				return err
			}
			continue
		}
		subs := make([]string, len(holders))
		for i, h := range holders {
			subs[i] = filepath.Join(h, name)
			st, err := os.Lstat(subs[i])
			if err != nil {
				return err
			}
			if !st.IsDir() {
				return fmt.Errorf("%s is in %d layers and is not a directory in %s", name, len(holders), h)
			}
		}
		if err := merge(target, subs, depth+1); err != nil {
			return err
		}
	}
	return nil
}
