package hdfs

import (
	"context"
	"errors"
	"os"
	"path"
	"sort"
	"time"
)

// CacheEntry is one file in the user's cache.
type CacheEntry struct {
	Digest  string // hex SHA-256 of the content
	Name    string
	Path    string
	Size    int64
	ModTime time.Time // when it was uploaded
	// AccessTime is the NameNode's last read time, coarse (dfs.namenode.accesstime.precision,
	// 1 h by default) and zero where access times are off.
	AccessTime time.Time
}

// LastUsed is the later of upload and last read: what cleaning ages by.
func (e CacheEntry) LastUsed() time.Time {
	if e.AccessTime.After(e.ModTime) {
		return e.AccessTime
	}
	return e.ModTime
}

// ListCache lists the user's cached files, by digest then name. Uploads in
// progress (temporary files) are not listed.
func (fs *FS) ListCache(ctx context.Context) ([]CacheEntry, error) {
	entries, _, err := fs.scanCache(ctx)
	return entries, err
}

// CleanCache removes cached files not used for olderThan, plus temporary files
// that old (abandoned uploads) and digest directories left empty.
//
// A file cleaned while an application that uses it is still being localized
// makes that localization fail; callers choose olderThan well beyond job runtimes.
func (fs *FS) CleanCache(ctx context.Context, olderThan time.Duration) (removed []CacheEntry, err error) {
	entries, temps, err := fs.scanCache(ctx)
	if err != nil {
		return nil, err
	}
	cutoff := time.Now().Add(-olderThan)
	dirs := map[string]int{} // digest dir → files remaining
	for _, e := range entries {
		dirs[path.Dir(e.Path)]++
	}
	for _, t := range temps {
		dirs[path.Dir(t.Path)]++
	}
	remove := func(p string) error {
		err := fs.do(ctx, func() error { return fs.client.Remove(p) })
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return pathErr("clean cache", p, err)
		}
		dirs[path.Dir(p)]--
		return nil
	}
	for _, e := range entries {
		if !e.LastUsed().Before(cutoff) {
			continue
		}
		if err := remove(e.Path); err != nil {
			return removed, err
		}
		removed = append(removed, e)
	}
	for _, t := range temps {
		if t.ModTime.Before(cutoff) {
			if err := remove(t.Path); err != nil {
				return removed, err
			}
		}
	}
	for dir, n := range dirs {
		if n > 0 {
			continue
		}
		// Non-recursive: if an uploader has just put a file in, the delete
		// fails and the directory stays, as it should.
		_ = fs.do(ctx, func() error { return fs.client.Remove(dir) })
	}
	return removed, nil
}

// scanCache walks <cache>/<digest>/<name>, splitting real entries from
// temporary files. Anything else under the cache root is not ours and ignored.
func (fs *FS) scanCache(ctx context.Context) (entries, temps []CacheEntry, err error) {
	root := CacheDir(fs.user)
	dirs, err := fs.readDir(ctx, root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, pathErr("list cache", root, err)
	}
	for _, d := range dirs {
		if !d.IsDir() || !digestRE.MatchString(d.Name()) {
			continue
		}
		dir := path.Join(root, d.Name())
		files, err := fs.readDir(ctx, dir)
		if errors.Is(err, os.ErrNotExist) {
			continue // cleaned concurrently
		}
		if err != nil {
			return nil, nil, pathErr("list cache", dir, err)
		}
		for _, f := range files {
			if f.IsDir() {
				continue
			}
			e := CacheEntry{
				Digest:  d.Name(),
				Name:    f.Name(),
				Path:    path.Join(dir, f.Name()),
				Size:    f.Size(),
				ModTime: f.ModTime(),
			}
			if a, ok := f.(interface{ AccessTime() time.Time }); ok && a.AccessTime().UnixMilli() > 0 {
				e.AccessTime = a.AccessTime()
			}
			if isTempName(f.Name()) {
				temps = append(temps, e)
			} else {
				entries = append(entries, e)
			}
		}
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].Digest != entries[j].Digest {
			return entries[i].Digest < entries[j].Digest
		}
		return entries[i].Name < entries[j].Name
	})
	return entries, temps, nil
}

func (fs *FS) readDir(ctx context.Context, p string) ([]os.FileInfo, error) {
	var out []os.FileInfo
	err := fs.do(ctx, func() error {
		var err error
		out, err = fs.client.ReadDir(p)
		return err
	})
	return out, err
}
