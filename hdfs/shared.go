package hdfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
)

// SharedPath is where a file of the given SHA-256 (hex) and name lives in
// a shared cache directory: <dir>/<sha256>-<name>, flat, so that the
// directory's sticky bit guards every entry itself (only its owner, the
// directory's owner and the superuser may delete or rename it). The name
// keeps its suffix, which the NodeManager unpacks archives by.
func SharedPath(dir, digest, name string) string {
	return path.Join(dir, digest+"-"+name)
}

// SharedDigest is the SHA-256 a shared cache path (SharedPath) is named
// by; ok is false for any other path.
func SharedDigest(dir, p string) (digest string, ok bool) {
	base := path.Base(p)
	if path.Dir(p) != path.Clean(dir) || len(base) < 66 || base[64] != '-' || !digestRE.MatchString(base[:64]) {
		return "", false
	}
	return base[:64], true
}

// SharedCacheError says a shared cache directory cannot be used, and how
// an administrator makes one.
type SharedCacheError struct {
	Dir     string
	Problem string
}

func (e *SharedCacheError) Error() string {
	return fmt.Sprintf("shared cache directory %s %s; an administrator creates it like /tmp: hdfs dfs -mkdir -p %s && hdfs dfs -chmod 1777 %s",
		e.Dir, e.Problem, e.Dir, e.Dir)
}

// SharedCacheOptions tune OpenSharedCache.
type SharedCacheOptions struct {
	// Memo remembers the entries verified on this machine; nil: every
	// entry of another user is read at every use.
	Memo *VerifiedMemo
	// Notice, if set, is told (one line each) of an entry refused and of
	// one verified by reading it.
	Notice func(msg string)
}

// SharedCache is a cache directory shared by the cluster's users, made by
// an administrator like /tmp (mode 1777: anyone may add entries, only an
// entry's owner may remove or rename it). Files are named by their sha256
// (SharedPath) and used by everyone who ships the same content, so the
// NodeManagers localize them once per node for all users (PUBLIC).
//
// Anyone can put anything under any name there, so an entry is used only
// when we can trust its content (judgeEntry): our own; the directory
// owner's or the superuser's (they can replace any entry at any time
// anyway); or another user's, after reading it whole and checking its
// sha256 against its name, remembered on this machine (VerifiedMemo) while
// its length, modification time, owner and file id stay the same. YARN is
// given the modification time we saw, so a file replaced after our check
// fails localization instead of running. An entry refused (wrong content,
// wrong length, unreadable) is left alone, said once (Notice), and our file
// goes to the user's own cache (CacheDir) instead; so does a file we may
// not write into the directory.
type SharedCache struct {
	fs        *FS
	dir       string
	dirOwner  string
	superUser string
	opts      SharedCacheOptions

	mu      sync.Mutex
	refused map[string]bool // entries refused this session: not judged again
}

// OpenSharedCache checks that dir can serve as a shared cache: an
// absolute path to an existing directory, sticky, writable by us, with
// every directory above it open to others (else YARN would not localize
// its files as PUBLIC). A *SharedCacheError says what is wrong.
func (fs *FS) OpenSharedCache(ctx context.Context, dir string, opts SharedCacheOptions) (*SharedCache, error) {
	if !path.IsAbs(dir) || path.Clean(dir) != dir || strings.Contains(dir, ":") {
		return nil, &SharedCacheError{Dir: dir, Problem: "is not an absolute HDFS path (like /shared/tfyarn-cache)"}
	}
	fi, err := fs.stat(ctx, dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, &SharedCacheError{Dir: dir, Problem: "does not exist"}
	case errors.Is(err, os.ErrPermission):
		return nil, &SharedCacheError{Dir: dir, Problem: fmt.Sprintf("cannot be reached by %s (a directory above it is closed to others)", fs.user)}
	case err != nil:
		return nil, pathErr("open shared cache", dir, err)
	case !fi.IsDir():
		return nil, &SharedCacheError{Dir: dir, Problem: "is not a directory"}
	}
	owner := fileOwner(fi)
	perm := uint32(fi.Mode()) & 0o7777
	switch {
	case perm&0o1000 == 0:
		return nil, &SharedCacheError{Dir: dir, Problem: fmt.Sprintf("is not sticky (mode %04o, owner %s): anyone could remove others' entries", perm, owner)}
	case owner != fs.user && perm&0o003 != 0o003:
		return nil, &SharedCacheError{Dir: dir, Problem: fmt.Sprintf("is not writable by %s (mode %04o, owner %s)", fs.user, perm, owner)}
	}
	for up := path.Dir(dir); ; up = path.Dir(up) {
		if !fs.othersMayTraverse(ctx, up) {
			return nil, &SharedCacheError{Dir: dir, Problem: fmt.Sprintf("is below %s, which others may not enter (YARN would not localize its files as PUBLIC)", up)}
		}
		if up == "/" {
			break
		}
	}
	root, err := fs.stat(ctx, "/")
	if err != nil {
		return nil, pathErr("open shared cache", "/", err)
	}
	return &SharedCache{fs: fs, dir: dir, dirOwner: owner, superUser: fileOwner(root), opts: opts, refused: map[string]bool{}}, nil
}

// Dir is the shared directory.
func (c *SharedCache) Dir() string { return c.dir }

// UploadOptions is FS.UploadCachedOptions through the shared directory:
// the file is used from there when an entry we trust has it, else
// written there (aside, then renamed without overwriting), else, when the
// entry there is refused or the directory will not take it, put in the
// user's own cache. uploadedBytes counts every byte sent.
func (c *SharedCache) UploadOptions(ctx context.Context, localPath, name string, opts UploadOptions) (r Resource, uploadedBytes int64, err error) {
	digest, size, open, err := fileSource(ctx, localPath, name, opts)
	if err != nil {
		return Resource{}, 0, err
	}
	return c.upload(ctx, digest, size, name, open, opts)
}

// UploadBytes is UploadOptions for small generated content.
func (c *SharedCache) UploadBytes(ctx context.Context, data []byte, name string) (Resource, int64, error) {
	digest, size, open, err := bytesSource(ctx, data, name)
	if err != nil {
		return Resource{}, 0, err
	}
	return c.upload(ctx, digest, size, name, open, UploadOptions{})
}

// Lookup is FS.LookupCached through the shared directory: a trusted entry
// there, else the user's own cache's. ok is false when neither has it.
func (c *SharedCache) Lookup(ctx context.Context, digest, name string, size int64) (r Resource, ok bool, err error) {
	if err := checkName(name); err != nil {
		return Resource{}, false, pathErr("lookup", name, err)
	}
	if !digestRE.MatchString(digest) {
		return Resource{}, false, pathErr("lookup", name, fmt.Errorf("invalid sha256 %q", digest))
	}
	final := SharedPath(c.dir, digest, name)
	if !c.isRefused(final) {
		r, st, err := c.entry(ctx, final, digest, size)
		if err != nil || st == entryUsable {
			return r, err == nil, err
		}
		if st == entryAbsent {
			return Resource{}, false, nil
		}
	}
	return c.fs.LookupCached(ctx, digest, name, size)
}

func (c *SharedCache) upload(ctx context.Context, digest string, size int64, name string,
	open func() (io.ReadCloser, error), opts UploadOptions) (Resource, int64, error) {
	final := SharedPath(c.dir, digest, name)
	var sent int64
	if !c.isRefused(final) {
		r, st, err := c.entry(ctx, final, digest, size)
		if err != nil || st == entryUsable {
			return r, 0, err
		}
		if st == entryAbsent {
			var exists bool
			sent, exists, err = c.fs.publish(ctx, c.dir, final, digest, size, open, opts)
			switch {
			case errors.Is(err, os.ErrPermission):
				c.refuse(final, "", fmt.Sprintf("%s may not write into %s", c.fs.user, c.dir))
			case err != nil:
				return Resource{}, sent, err
			case !exists:
				fi, err := c.fs.stat(ctx, final)
				if err != nil {
					return Resource{}, sent, pathErr("upload", final, err)
				}
				return c.fs.resource(final, fi, c.fs.cacheVisibility(ctx, final, fi)), sent, nil
			default:
				// A concurrent uploader won the rename: judge its file.
				r, st, err := c.entry(ctx, final, digest, size)
				switch {
				case err != nil:
					return Resource{}, sent, err
				case st == entryUsable:
					return r, sent, nil
				case st == entryAbsent:
					return Resource{}, sent, pathErr("upload", final, errors.New("shared cache entry vanished after a concurrent upload"))
				}
			}
		}
	}
	r, n, err := c.fs.uploadCached(ctx, digest, size, name, open, opts)
	return r, sent + n, err
}

type entryState int

const (
	entryAbsent entryState = iota
	entryUsable
	entryRefused
)

// entry finds, judges and if need be verifies the shared entry at p.
func (c *SharedCache) entry(ctx context.Context, p, digest string, size int64) (Resource, entryState, error) {
	fi, err := c.fs.stat(ctx, p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return Resource{}, entryAbsent, nil
	case err != nil:
		return Resource{}, entryAbsent, pathErr("upload", p, err)
	}
	rec := c.record(p, fi, digest)
	v, reason := judgeEntry(entryFacts{
		User:       c.fs.user,
		Owner:      rec.Owner,
		DirOwner:   c.dirOwner,
		SuperUser:  c.superUser,
		Regular:    fi.Mode().IsRegular(),
		Size:       fi.Size(),
		Want:       size,
		OthersRead: fi.Mode()&0o004 != 0,
		Remembered: c.opts.Memo.holds(rec),
	})
	if v == mustVerify {
		v, reason, err = c.verify(ctx, p, fi, rec)
		if err != nil {
			return Resource{}, entryAbsent, err
		}
	}
	if v == refuse {
		c.refuse(p, rec.Owner, reason)
		return Resource{}, entryRefused, nil
	}
	return c.fs.resource(p, fi, c.fs.cacheVisibility(ctx, p, fi)), entryUsable, nil
}

// verify reads another user's entry whole and compares its sha256 with the
// one its name says; the entry must still be the one stat saw afterwards.
func (c *SharedCache) verify(ctx context.Context, p string, fi os.FileInfo, rec verifiedEntry) (verdict, string, error) {
	start := time.Now()
	got, n, err := c.fs.fileDigest(ctx, p)
	switch {
	case errors.Is(err, os.ErrPermission):
		return refuse, "it is not readable by " + c.fs.user, nil
	case err != nil:
		return 0, "", pathErr("verify", p, err)
	}
	again, err := c.fs.stat(ctx, p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, "", pathErr("verify", p, err)
	}
	if err != nil || c.record(p, again, rec.SHA256) != rec || n != fi.Size() {
		return refuse, "it changed while being verified", nil
	}
	if got != rec.SHA256 {
		return refuse, fmt.Sprintf("its content's sha256 is %s, not the one its name says", got[:12]), nil
	}
	_ = c.opts.Memo.remember(rec)
	c.notice(fmt.Sprintf("shared cache: verified %s (owned by %s): its content matches its name (%d bytes read in %.1fs)",
		p, rec.Owner, n, time.Since(start).Seconds()))
	return useRemembered, "", nil
}

// record is what a verification of p, as fi describes it, is remembered by.
func (c *SharedCache) record(p string, fi os.FileInfo, digest string) verifiedEntry {
	e := verifiedEntry{FS: c.fs.target.URI, Path: p, Size: fi.Size(), ModTime: fi.ModTime().UnixMilli(), Owner: fileOwner(fi), SHA256: digest}
	if st, ok := fi.Sys().(interface{ GetFileId() uint64 }); ok {
		e.FileID = st.GetFileId()
	}
	return e
}

func (c *SharedCache) isRefused(p string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused[p]
}

// refuse remembers p as refused for this session and says so once.
func (c *SharedCache) refuse(p, owner, reason string) {
	c.mu.Lock()
	c.refused[p] = true
	c.mu.Unlock()
	by := ""
	if owner != "" {
		by = " (owned by " + owner + ")"
	}
	c.notice(fmt.Sprintf("shared cache: not using %s%s: %s; shipping it through your own cache %s instead",
		p, by, reason, CacheDir(c.fs.user)))
}

func (c *SharedCache) notice(msg string) {
	if c.opts.Notice != nil {
		c.opts.Notice(msg)
	}
}

func fileOwner(fi os.FileInfo) string {
	if o, ok := fi.(interface{ Owner() string }); ok {
		return o.Owner()
	}
	return ""
}

// fileDigest streams the HDFS file at p through sha256, each read bounded
// by the I/O timeout, ctx checked between chunks.
func (fs *FS) fileDigest(ctx context.Context, p string) (string, int64, error) {
	var f *gohdfs.FileReader
	err := fs.do(ctx, func() error {
		var err error
		f, err = fs.client.Open(p)
		return err
	})
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, ctxReader{ctx, deadlineReader{f, fs.ioTimeout}}, make([]byte, copyChunk))
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// deadlineReader gives each read from a DataNode a fresh deadline.
type deadlineReader struct {
	f       *gohdfs.FileReader
	timeout time.Duration
}

func (r deadlineReader) Read(b []byte) (int, error) {
	if err := r.f.SetDeadline(time.Now().Add(r.timeout)); err != nil {
		return 0, err
	}
	return r.f.Read(b)
}

// MakeSharedCacheDir makes dir (with any missing parents, 0755) a shared
// cache directory, mode 1777 like /tmp, and checks it as OpenSharedCache
// does. A directory that is one already is left as it is.
func (fs *FS) MakeSharedCacheDir(ctx context.Context, dir string) error {
	if _, err := fs.OpenSharedCache(ctx, dir, SharedCacheOptions{}); err == nil {
		return nil
	} else if se := (*SharedCacheError)(nil); !errors.As(err, &se) || strings.Contains(se.Problem, "absolute") {
		return err
	}
	if err := fs.mkdirAll(ctx, dir, 0o755); err != nil {
		return pathErr("mkdir", dir, err)
	}
	// colinmarc passes the mode's low bits as they are: 01000 is the
	// sticky bit on the NameNode.
	if err := fs.do(ctx, func() error { return fs.client.Chmod(dir, 0o1777) }); err != nil {
		return pathErr("chmod 1777", dir, err)
	}
	_, err := fs.OpenSharedCache(ctx, dir, SharedCacheOptions{})
	return err
}
