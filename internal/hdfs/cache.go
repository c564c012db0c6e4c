package hdfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
)

// UploadCached puts the local file into the user's content-addressed cache as
// /user/<user>/.tfyarn/cache/<sha256>/<name>, readable by the user only or
// by all as the options' Access says (the zero value: Public), and
// describes it as a PUBLIC resource when the NodeManager accepts it as one
// (cacheVisibility: then it caches it once per node for every user), else
// PRIVATE (once per user and node, across applications). The cache's
// directories are 0711: others may pass through, not list.
//
// When the cache already holds it, nothing is written and uploadedBytes is 0
// (a file cached by an earlier version with a wider mode than its Access is
// closed to it then). Otherwise the file is written aside and renamed into
// place without overwriting, so readers never see a partial file and a
// cached file never changes once described; when a concurrent uploader wins
// that rename, its file is used and ours dropped (uploadedBytes then still
// counts what we sent).
// A write that fails mid-stream (a broken DataNode pipeline) is retried under
// a fresh temporary name, DefaultUploadAttempts in all; uploadedBytes counts
// the attempt that succeeded.
func (fs *FS) UploadCached(ctx context.Context, localPath, name string) (r Resource, uploadedBytes int64, err error) {
	return fs.UploadCachedOptions(ctx, localPath, name, UploadOptions{})
}

// UploadCachedOptions is UploadCached with a progress callback and retry tuning.
func (fs *FS) UploadCachedOptions(ctx context.Context, localPath, name string, opts UploadOptions) (r Resource, uploadedBytes int64, err error) {
	digest, size, open, err := fileSource(ctx, localPath, name, opts)
	if err != nil {
		return Resource{}, 0, err
	}
	return fs.uploadCached(ctx, digest, size, name, open, opts)
}

// UploadCachedBytes is UploadCached for small generated content.
func (fs *FS) UploadCachedBytes(ctx context.Context, data []byte, name string) (Resource, int64, error) {
	digest, size, open, err := bytesSource(ctx, data, name)
	if err != nil {
		return Resource{}, 0, err
	}
	return fs.uploadCached(ctx, digest, size, name, open, UploadOptions{})
}

func (fs *FS) uploadCached(ctx context.Context, digest string, size int64, name string,
	open func() (io.ReadCloser, error), opts UploadOptions) (Resource, int64, error) {
	dir := path.Join(CacheDir(fs.user), digest)
	final := path.Join(dir, name)

	if err := fs.ensureCacheDirs(ctx); err != nil {
		return Resource{}, 0, pathErr("upload", final, err)
	}
	if r, ok, err := fs.cachedResource(ctx, final, size, opts.Access); err != nil || ok {
		return r, 0, err
	}

	sent, exists, err := fs.publish(ctx, dir, final, digest, size, open, opts)
	if err != nil {
		return Resource{}, sent, err
	}
	if exists {
		// Lost the race: a concurrent uploader published the same content.
		r, ok, err := fs.cachedResource(ctx, final, size, opts.Access)
		if err == nil && !ok {
			err = errors.New("cache entry vanished after a concurrent upload")
		}
		if err != nil {
			return Resource{}, sent, err
		}
		return r, sent, nil
	}
	fi, err := fs.stat(ctx, final)
	if err != nil {
		return Resource{}, sent, pathErr("upload", final, err)
	}
	return fs.resource(final, fi, fs.cacheVisibility(ctx, final, fi)), sent, nil
}

// publish writes the content open gives aside in dir and renames it to
// final without overwriting. exists reports that final appeared meanwhile
// (a concurrent uploader won the rename): our copy is dropped, and sent
// still counts what we wrote.
func (fs *FS) publish(ctx context.Context, dir, final, digest string, size int64,
	open func() (io.ReadCloser, error), opts UploadOptions) (sent int64, exists bool, err error) {
	name := path.Base(final)
	perm := opts.Access.perm()
	write := func(ctx context.Context, dir, tmp string, src io.Reader) (written, error) {
		return fs.writeCacheTemp(ctx, dir, tmp, perm, src)
	}
	tmp, w, err := writeTempRetrying(ctx, dir, name, size, open, opts, write, fs.bestEffortRemove)
	if err != nil {
		return 0, false, pathErr("upload", final, err)
	}
	if w.digest != digest || w.size != size {
		fs.bestEffortRemove(tmp)
		return w.size, false, pathErr("upload", final,
			fmt.Errorf("local file changed while uploading (sha256 %s, %d bytes; then %s, %d bytes)", digest, size, w.digest, w.size))
	}
	if err := fs.renameNoReplace(ctx, tmp, final); err != nil {
		fs.bestEffortRemove(tmp)
		if !isExists(err) {
			return w.size, false, pathErr("upload", final, err)
		}
		return w.size, true, nil
	}
	return w.size, false, nil
}

// writeCacheTemp writes the temporary file, creating the digest directory
// first. A concurrent CleanCache may remove that (empty) directory between our
// mkdir and create; one retry covers it.
func (fs *FS) writeCacheTemp(ctx context.Context, dir, tmp string, perm os.FileMode, src io.Reader) (written, error) {
	for attempt := 0; ; attempt++ {
		if err := fs.mkdirAll(ctx, dir, cacheDirPerm); err != nil {
			return written{}, err
		}
		w, err := fs.writeFile(ctx, tmp, perm, src)
		if err != nil && attempt == 0 && errors.Is(err, os.ErrNotExist) {
			continue // nothing was read from src: create itself failed
		}
		return w, err
	}
}

// ensureCacheDirs makes .tfyarn and its cache directory, 0711, and closes
// them to that when an earlier version made them wider (once per FS).
func (fs *FS) ensureCacheDirs(ctx context.Context) error {
	if err := fs.ensureDir(ctx, BaseDir(fs.user), cacheDirPerm); err != nil {
		return err
	}
	return fs.ensureDir(ctx, CacheDir(fs.user), cacheDirPerm)
}

// cachedResource reports the cached file at p when it is there, complete
// (the expected size) and a regular file. A file more open than access
// wants (cached by an earlier version: all were 0644 in 0755 directories)
// is closed to it, and so is its digest directory.
func (fs *FS) cachedResource(ctx context.Context, p string, size int64, access Access) (Resource, bool, error) {
	fi, err := fs.stat(ctx, p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return Resource{}, false, nil
	case err != nil:
		return Resource{}, false, pathErr("upload", p, err)
	case fi.IsDir() || fi.Size() != size:
		// Only the aside-and-rename path writes here, so this is not a
		// half-written upload but something placed by hand: refuse to guess.
		return Resource{}, false, pathErr("upload", p, fmt.Errorf(
			"cache entry is not the expected %d-byte file (found %d bytes); remove it (tfyarn cache clean)", size, fi.Size()))
	}
	if mode := fi.Mode().Perm(); tightened(mode, access.perm()) != mode {
		if err := fs.tighten(ctx, p, access.perm(), fi); err != nil {
			return Resource{}, false, pathErr("upload", p, err)
		}
		if err := fs.tighten(ctx, path.Dir(p), cacheDirPerm, nil); err != nil {
			return Resource{}, false, pathErr("upload", p, err)
		}
		if fi, err = fs.stat(ctx, p); err != nil {
			return Resource{}, false, pathErr("upload", p, err)
		}
	}
	return fs.resource(p, fi, fs.cacheVisibility(ctx, p, fi)), true, nil
}

// LookupCached describes the cached file of the given SHA-256 (hex), name
// and size when the cache holds it, without any local file: for callers
// that know a file's digest from an earlier upload. ok is false when it is
// not there. access is the file's, as UploadCachedOptions would give it.
func (fs *FS) LookupCached(ctx context.Context, digest, name string, size int64, access Access) (r Resource, ok bool, err error) {
	if err := checkName(name); err != nil {
		return Resource{}, false, pathErr("lookup", name, err)
	}
	if !digestRE.MatchString(digest) {
		return Resource{}, false, pathErr("lookup", name, fmt.Errorf("invalid sha256 %q", digest))
	}
	r, ok, err = fs.cachedResource(ctx, CachePath(fs.user, digest, name), size, access)
	if err == nil && ok {
		if err := fs.ensureCacheDirs(ctx); err != nil {
			return Resource{}, false, pathErr("lookup", r.Path, err)
		}
	}
	return r, ok, err
}

// fileSource checks a cache entry's name and gives the local file's digest
// (known or computed), size and opener: what either cache needs to upload it.
func fileSource(ctx context.Context, localPath, name string, opts UploadOptions) (digest string, size int64, open func() (io.ReadCloser, error), err error) {
	if err := checkName(name); err != nil {
		return "", 0, nil, pathErr("upload", localPath, err)
	}
	digest, size, err = opts.knownDigest(localPath)
	if err == nil && digest == "" {
		digest, size, err = FileDigest(ctx, localPath)
	}
	if err != nil {
		return "", 0, nil, pathErr("upload", localPath, err)
	}
	return digest, size, func() (io.ReadCloser, error) { return os.Open(localPath) }, nil
}

// bytesSource is fileSource for small generated content.
func bytesSource(ctx context.Context, data []byte, name string) (digest string, size int64, open func() (io.ReadCloser, error), err error) {
	if err := checkName(name); err != nil {
		return "", 0, nil, pathErr("upload", name, err)
	}
	digest, size, err = readerDigest(ctx, bytes.NewReader(data))
	if err != nil {
		return "", 0, nil, pathErr("upload", name, err)
	}
	return digest, size, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, nil
}
