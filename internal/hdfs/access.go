package hdfs

import (
	"context"
	"os"
)

// Access says who may read a file of the user's own cache, and so how
// YARN localizes it.
//
// Public files (0644) are localized PUBLIC where YARN accepts it
// (cacheVisibility): the NodeManager downloads them itself, once per node,
// into its public cache, which every user on that node can read. That is
// right for what holds nothing of the user's: the tfyarn binary, and
// environments (installed packages; heavy, so downloaded once per node
// matters most there). Private files (0600) hold what the user wrote and
// may hold secrets (scripts, --files, --archives, source directories):
// localized PRIVATE, downloaded once per user and node into the user's own
// NodeManager cache and kept there for the user's later applications, so a
// user's next job localizes nothing either way.
type Access int

const (
	// Public is the zero value: 0644, localized PUBLIC where YARN accepts it.
	Public Access = iota
	// Private: 0600, localized PRIVATE.
	Private
)

func (a Access) perm() os.FileMode {
	if a == Private {
		return privateFilePerm
	}
	return publicFilePerm
}

// tightened is mode without the group and other bits perm lacks, with
// perm's owner bits: never more open than perm, never opened further.
func tightened(mode, perm os.FileMode) os.FileMode {
	return mode&perm&0o077 | perm&0o700
}

// tighten closes p (an existing file or directory of the user's) to no more
// than perm, for caches and histories written by earlier versions with
// wider modes. Directories are checked once per FS.
func (fs *FS) tighten(ctx context.Context, p string, perm os.FileMode, fi os.FileInfo) error {
	if fi == nil {
		fs.mu.Lock()
		done := fs.closedDirs[p]
		fs.mu.Unlock()
		if done {
			return nil
		}
		var err error
		if fi, err = fs.stat(ctx, p); err != nil {
			return err
		}
	}
	mode := fi.Mode().Perm()
	if want := tightened(mode, perm); want != mode {
		if err := fs.do(ctx, func() error { return fs.client.Chmod(p, want) }); err != nil {
			return err
		}
	}
	if fi.IsDir() {
		fs.mu.Lock()
		if fs.closedDirs == nil {
			fs.closedDirs = map[string]bool{}
		}
		fs.closedDirs[p] = true
		fs.mu.Unlock()
	}
	return nil
}

// ensureDir makes the directory p (and missing parents, with perm) and
// tightens it to perm.
func (fs *FS) ensureDir(ctx context.Context, p string, perm os.FileMode) error {
	fs.mu.Lock()
	done := fs.closedDirs[p]
	fs.mu.Unlock()
	if done {
		return nil
	}
	if err := fs.mkdirAll(ctx, p, perm); err != nil {
		return err
	}
	return fs.tighten(ctx, p, perm, nil)
}
