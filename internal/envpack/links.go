package envpack

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// LoopError is a symbolic link that leads back into the directory holding
// it (`ln -s .. lib/sub/up`), or one of a cycle of links. Packed as is, it
// kills every task before tfyarn's launcher starts: YARN's container launch
// script lists the container's directory with `find -L`, which fails on
// such a loop, and the user reads only "exit code 1". So it is refused
// before anything is packed or uploaded.
type LoopError struct {
	Link   string // relative to the directory packed, slash-separated
	Target string // what the link says
	Cycle  bool   // a cycle of links (resolving it never ends)
}

func (e *LoopError) Error() string {
	if e.Cycle {
		return fmt.Sprintf("%s is a symbolic link to %q in a cycle of links that never resolves, which makes YARN's container launch fail; remove it", e.Link, e.Target)
	}
	return fmt.Sprintf("%s is a symbolic link to %q, a directory that holds the link itself: the loop makes YARN's container launch fail (its find -L); remove the link", e.Link, e.Target)
}

// CheckEnvLinks walks the environment dir as Pack would and returns a
// *LoopError for the first link (in lexical order) that loops, nil when
// none does: the check a caller makes before creating anything.
func CheckEnvLinks(dir string) error {
	return findLinkLoop(dir, func(d fs.DirEntry, _ string) bool { return d.Name() == "__pycache__" })
}

// CheckDirLinks is CheckEnvLinks for a source directory (PackDir).
func CheckDirLinks(dir string) error {
	return findLinkLoop(dir, func(d fs.DirEntry, full string) bool { return dirSkipDirs[d.Name()] || IsEnv(full) })
}

// findLinkLoop walks dir, leaving out the directories skip says.
func findLinkLoop(dir string, skip func(d fs.DirEntry, full string) bool) error {
	root, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var found *LoopError
	err = filepath.WalkDir(root, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && full != root && skip != nil && skip(d, full) {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, err := filepath.Rel(root, full)
		if err != nil {
			return err
		}
		if found, err = linkLoop(full, filepath.ToSlash(rel)); found != nil || err != nil {
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		return err
	}
	if found != nil {
		return found
	}
	return nil
}

// linkLoop reports whether the link at full (rel in messages) loops: it
// resolves to a directory at or above its own, or never resolves.
func linkLoop(full, rel string) (*LoopError, error) {
	target, err := os.Readlink(full)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(full)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return &LoopError{Link: rel, Target: target, Cycle: true}, nil
	case err != nil || !st.IsDir():
		return nil, nil // dangling, or not a directory: no loop to walk into
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return nil, nil
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(full))
	if err != nil {
		return nil, nil
	}
	if parent == real || strings.HasPrefix(parent, strings.TrimSuffix(real, string(filepath.Separator))+string(filepath.Separator)) {
		return &LoopError{Link: rel, Target: target}, nil
	}
	return nil, nil
}
