package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
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
	// Notice, if set, is told (one line each) of an entry passed over.
	Notice func(msg string)
	// Admins are the users, besides the HDFS superuser (and us), whose
	// shared directories and entries are trusted
	// (tfyarn.cache.trusted-owners); AdminsFrom says where that was set.
	Admins     []string
	AdminsFrom string
}

// SharedCache is a cache directory shared by the cluster's users, made by
// an administrator like /tmp (mode 1777: anyone may add entries, only an
// entry's owner may remove or rename it). Files are named by their sha256
// (SharedPath) and used by everyone who ships the same content, so the
// NodeManagers localize them once per node for all users (PUBLIC).
//
// Anyone can put anything under any name there, and an entry's owner can
// rewrite it in place at any time keeping its length and modification time,
// so an entry is used only when nobody but us, the directory's owner or the
// superuser can change it (judgeEntry): our own, or the directory owner's
// or the superuser's (they can replace any entry at any time anyway), and
// never one that its group or others may write. Another user's upload
// becomes usable by all when an administrator adopts it (Adopt). An entry
// passed over is left alone, said once (Notice), and our file goes to the
// user's own cache (CacheDir) instead; so does a file we may not write into
// the directory. YARN is given the modification time we saw, so an entry
// replaced after submission fails localization instead of running.
type SharedCache struct {
	fs        *FS
	dir       string
	dirOwner  string
	superUser string
	rule      trustRule
	opts      SharedCacheOptions

	mu      sync.Mutex
	refused map[string]bool // entries refused this session: not judged again
}

// OpenSharedCache checks that dir can serve as a shared cache: an
// absolute path to an existing directory, sticky, writable by us, with
// every directory above it open to others (else YARN would not localize
// its files as PUBLIC). A *SharedCacheError says what is wrong. Then that
// nobody untrusted could replace it or its entries (judgeDirs): else an
// *UntrustedCacheError, and the caller ships through the user's own cache.
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
	chain, err := fs.trustChain(ctx, dir)
	if err != nil {
		return nil, err
	}
	rule := trustRule{User: fs.user, SuperUser: chain[0].Owner, Admins: opts.Admins, AdminsFrom: opts.AdminsFrom}
	if problem := judgeDirs(rule, chain); problem != "" {
		return nil, &UntrustedCacheError{Dir: dir, Problem: problem}
	}
	return &SharedCache{fs: fs, dir: dir, dirOwner: owner, superUser: rule.SuperUser, rule: rule, opts: opts, refused: map[string]bool{}}, nil
}

// Trusts says, in one line, whose entries a job through the directory
// uses besides its user's own.
func (c *SharedCache) Trusts() string {
	return fmt.Sprintf("shared cache %s: trusting entries adopted by %s", c.dir, c.rule.whom())
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
// there, else the user's own cache's (access is the file's there). ok is
// false when neither has it.
func (c *SharedCache) Lookup(ctx context.Context, digest, name string, size int64, access Access) (r Resource, ok bool, err error) {
	if err := checkName(name); err != nil {
		return Resource{}, false, pathErr("lookup", name, err)
	}
	if !digestRE.MatchString(digest) {
		return Resource{}, false, pathErr("lookup", name, fmt.Errorf("invalid sha256 %q", digest))
	}
	final := SharedPath(c.dir, digest, name)
	if !c.isRefused(final) {
		r, st, err := c.entry(ctx, final, size)
		if err != nil || st == entryUsable {
			return r, err == nil, err
		}
		if st == entryAbsent {
			return Resource{}, false, nil
		}
	}
	return c.fs.LookupCached(ctx, digest, name, size, access)
}

func (c *SharedCache) upload(ctx context.Context, digest string, size int64, name string,
	open func() (io.ReadCloser, error), opts UploadOptions) (Resource, int64, error) {
	final := SharedPath(c.dir, digest, name)
	var sent int64
	if !c.isRefused(final) {
		r, st, err := c.entry(ctx, final, size)
		if err != nil || st == entryUsable {
			return r, 0, err
		}
		if st == entryAbsent {
			var exists bool
			// Entries of the shared directory are readable by all:
			// sharing is what the user chose it for.
			shared := opts
			shared.Access = Public
			sent, exists, err = c.fs.publish(ctx, c.dir, final, digest, size, open, shared)
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
				r, st, err := c.entry(ctx, final, size)
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

// entry finds and judges the shared entry at p.
func (c *SharedCache) entry(ctx context.Context, p string, size int64) (Resource, entryState, error) {
	fi, err := c.fs.stat(ctx, p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return Resource{}, entryAbsent, nil
	case err != nil:
		return Resource{}, entryAbsent, pathErr("upload", p, err)
	}
	owner := fileOwner(fi)
	v, reason := judgeEntry(entryFacts{
		User:       c.fs.user,
		Owner:      owner,
		Trusted:    c.rule.trusts(owner),
		Regular:    fi.Mode().IsRegular(),
		Size:       fi.Size(),
		Want:       size,
		OthersRead: fi.Mode()&0o004 != 0,
		Writable:   fi.Mode()&0o022 != 0,
	})
	if v == refuse {
		c.refuse(p, owner, reason)
		return Resource{}, entryRefused, nil
	}
	return c.fs.resource(p, fi, c.fs.cacheVisibility(ctx, p, fi)), entryUsable, nil
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
// does. A directory that is one already is left as it is. Only the HDFS
// superuser or an administrator opts names makes one: other users' jobs
// trust no one else's (*UntrustedCacheError, nothing made).
func (fs *FS) MakeSharedCacheDir(ctx context.Context, dir string, opts SharedCacheOptions) error {
	if _, err := fs.OpenSharedCache(ctx, dir, opts); err == nil {
		return fs.trustedByOthers(ctx, dir, opts)
	} else if se := (*SharedCacheError)(nil); !errors.As(err, &se) || strings.Contains(se.Problem, "absolute") {
		return err
	}
	if err := fs.trustedByOthers(ctx, "", opts); err != nil {
		return &UntrustedCacheError{Dir: dir, Problem: "other users' jobs would not trust a directory of " + err.Error()}
	}
	if err := fs.wouldTrust(ctx, dir, opts); err != nil {
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
	_, err := fs.OpenSharedCache(ctx, dir, opts)
	return err
}

// trustedByOthers is nil when dir's owner (dir "": we) is trusted by
// every user (the superuser or a configured administrator), else an
// error naming the owner, who is not.
func (fs *FS) trustedByOthers(ctx context.Context, dir string, opts SharedCacheOptions) error {
	root, err := fs.stat(ctx, "/")
	if err != nil {
		return pathErr("open shared cache", "/", err)
	}
	rule := trustRule{SuperUser: fileOwner(root), Admins: opts.Admins, AdminsFrom: opts.AdminsFrom}
	owner := fs.user
	if dir != "" {
		fi, err := fs.stat(ctx, dir)
		if err != nil {
			return pathErr("open shared cache", dir, err)
		}
		if owner = fileOwner(fi); !rule.trusts(owner) {
			return &UntrustedCacheError{Dir: dir, Problem: "other users' jobs do not trust it: it is owned by " + rule.untrusted(owner)}
		}
	}
	if !rule.trusts(owner) {
		return errors.New(rule.untrusted(owner))
	}
	return nil
}

// Adopted says what Adopt did with one entry.
type Adopted struct {
	Path string
	// Owner is whose entry it was.
	Owner string
	Size  int64
	// Trusted: the entry was the directory owner's or the superuser's
	// already (and closed to writers but its owner): left as it is.
	Trusted bool
}

// AdoptError says why an entry was not adopted: its content is not the
// one its name says, or it is not a file. The entry is left as it is.
type AdoptError struct {
	Path    string
	Owner   string
	Problem string
}

func (e *AdoptError) Error() string {
	return fmt.Sprintf("not adopting %s (owned by %s): %s; it is left as it is (remove it: hdfs dfs -rm %s)", e.Path, e.Owner, e.Problem, e.Path)
}

// NotAdminError says who may adopt entries of a shared cache directory.
type NotAdminError struct {
	Dir, User, DirOwner, SuperUser string
}

func (e *NotAdminError) Error() string {
	return fmt.Sprintf("only the owner of %s (%s) or the HDFS superuser (%s) may adopt its entries, not %s", e.Dir, e.DirOwner, e.SuperUser, e.User)
}

// Adopt makes another user's entry p of the shared directory usable by
// everyone: it reads the entry while writing a copy in our name beside it
// (0644), checks the copy's sha256 against the entry's name, and renames
// the copy over the entry, atomically. What the copy holds is what was
// checked, and from then on only we (the directory's owner or the
// superuser) can change it, so judgeEntry uses it for everyone. The copy
// has a new modification time: NodeManagers download it again once,
// rather than trust copies they keep under the old one, which the former
// owner may have had them download with other bytes. A job of the former
// owner submitted before and localizing after the rename fails that
// localization (its entry changed), as with any replaced entry.
//
// Only the directory's owner and the superuser may adopt (*NotAdminError);
// an entry whose content is not its name's is left as it is (*AdoptError).
func (c *SharedCache) Adopt(ctx context.Context, p string) (Adopted, error) {
	if c.fs.user != c.dirOwner && c.fs.user != c.superUser {
		return Adopted{}, &NotAdminError{Dir: c.dir, User: c.fs.user, DirOwner: c.dirOwner, SuperUser: c.superUser}
	}
	digest, ok := SharedDigest(c.dir, p)
	if !ok {
		return Adopted{}, fmt.Errorf("hdfs: adopt %s: not an entry of the shared cache directory %s (expected %s/<sha256>-<name>)", p, c.dir, c.dir)
	}
	fi, err := c.fs.stat(ctx, p)
	if err != nil {
		return Adopted{}, pathErr("adopt", p, err)
	}
	owner := fileOwner(fi)
	a := Adopted{Path: p, Owner: owner, Size: fi.Size()}
	switch {
	case !fi.Mode().IsRegular():
		return a, &AdoptError{Path: p, Owner: owner, Problem: "it is not a regular file"}
	case (owner == c.dirOwner || owner == c.superUser) && fi.Mode()&0o022 == 0:
		a.Trusted = true
		return a, nil
	}
	tmpName, err := tempName(path.Base(p))
	if err != nil {
		return a, pathErr("adopt", p, err)
	}
	tmp := path.Join(c.dir, tmpName)
	var f *gohdfs.FileReader
	if err := c.fs.do(ctx, func() error {
		var err error
		f, err = c.fs.client.Open(p)
		return err
	}); err != nil {
		return a, pathErr("adopt", p, err)
	}
	w, err := c.fs.writeFile(ctx, tmp, publicFilePerm, ctxReader{ctx, deadlineReader{f, c.fs.ioTimeout}})
	f.Close()
	if err != nil {
		c.fs.bestEffortRemove(tmp)
		return a, pathErr("adopt", p, err)
	}
	if w.digest != digest {
		c.fs.bestEffortRemove(tmp)
		return a, &AdoptError{Path: p, Owner: owner,
			Problem: fmt.Sprintf("its content's sha256 is %s, not the one its name says", w.digest[:12])}
	}
	if err := c.fs.renameReplacing(ctx, tmp, p); err != nil {
		c.fs.bestEffortRemove(tmp)
		return a, pathErr("adopt", p, err)
	}
	a.Size = w.size
	return a, nil
}

// AdoptAll adopts (Adopt) every entry of the directory, in name order,
// telling each outcome to report; uploads in progress (temporary files)
// and names that are not entries are skipped. The error is for the
// directory as a whole (not an administrator, cannot list it).
func (c *SharedCache) AdoptAll(ctx context.Context, report func(Adopted, error)) error {
	if c.fs.user != c.dirOwner && c.fs.user != c.superUser {
		return &NotAdminError{Dir: c.dir, User: c.fs.user, DirOwner: c.dirOwner, SuperUser: c.superUser}
	}
	infos, err := c.fs.readDir(ctx, c.dir)
	if err != nil {
		return pathErr("adopt", c.dir, err)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name() < infos[j].Name() })
	for _, fi := range infos {
		p := path.Join(c.dir, fi.Name())
		if _, ok := SharedDigest(c.dir, p); !ok || isTempName(fi.Name()) {
			continue
		}
		report(c.Adopt(ctx, p))
	}
	return nil
}
