package hdfs

import (
	"context"
	"os"
	"path"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// cacheVisibility is how a cached file is localized. PUBLIC when the
// NodeManager will accept it as public: its FSDownload.isPublic wants the
// file readable by others and every ancestor directory executable by
// others, and fails the localization of a PUBLIC resource that is not.
// A public file is downloaded and unpacked once per node by the NodeManager
// itself, then shared by every application of every user naming the same
// path and timestamp (a PRIVATE one once per user and node, by a localizer
// process per container). The cache's files are world-readable already
// (0644), so this exposes nothing new. Otherwise (a home directory closed
// to others, any doubt) PRIVATE.
func (fs *FS) cacheVisibility(ctx context.Context, p string, fi os.FileInfo) hadoopyarn.LocalResourceVisibilityProto {
	if fi.Mode().Perm()&0o004 == 0 {
		return hadoopyarn.LocalResourceVisibilityProto_PRIVATE
	}
	for dir := path.Dir(p); ; dir = path.Dir(dir) {
		if !fs.othersMayTraverse(ctx, dir) {
			return hadoopyarn.LocalResourceVisibilityProto_PRIVATE
		}
		if dir == "/" {
			return hadoopyarn.LocalResourceVisibilityProto_PUBLIC
		}
	}
}

// othersMayTraverse reports whether dir is a directory with the execute
// bit for others. Positive answers are cached for the FS's lifetime (a
// directory closed meanwhile fails that job's localization, with the
// NodeManager saying so); a failed stat is a no, not cached.
func (fs *FS) othersMayTraverse(ctx context.Context, dir string) bool {
	fs.mu.Lock()
	ok := fs.openDirs[dir]
	fs.mu.Unlock()
	if ok {
		return true
	}
	fi, err := fs.stat(ctx, dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o001 == 0 {
		return false
	}
	fs.mu.Lock()
	if fs.openDirs == nil {
		fs.openDirs = map[string]bool{}
	}
	fs.openDirs[dir] = true
	fs.mu.Unlock()
	return true
}
