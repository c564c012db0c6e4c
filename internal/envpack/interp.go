package envpack

import (
	"os"
	"path"
	"path/filepath"
)

// baseInterpreter is the interpreter a venv's bin/python ends up running:
// the first target of its symlink chain outside the environment. For a venv
// made with --copies (no symlink) it is pyvenv.cfg's executable, else
// home/python3. prefixes let absolute links back into the env be followed.
func baseInterpreter(root string, prefixes []string, exe, home string) string {
	rel := "bin/python"
	for i := 0; i < 16; i++ {
		full := filepath.Join(root, filepath.FromSlash(rel))
		st, err := os.Lstat(full)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			break
		}
		t, err := os.Readlink(full)
		if err != nil {
			break
		}
		if filepath.IsAbs(t) {
			in, ok := underPrefix(filepath.Clean(t), prefixes)
			if !ok {
				return filepath.Clean(t)
			}
			rel = in
			continue
		}
		next := path.Join(path.Dir(rel), filepath.ToSlash(t))
		if escapes(next) {
			return filepath.Join(root, filepath.FromSlash(next))
		}
		rel = next
	}
	if exe != "" {
		return exe
	}
	if home != "" {
		return filepath.Join(home, "python3")
	}
	return ""
}
