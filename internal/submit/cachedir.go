package submit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// ConfCacheDir is the client configuration key (core-site.xml or
// yarn-site.xml under HADOOP_CONF_DIR) naming the cluster's shared cache
// directory, for an administrator to set once for every user; Job.CacheDir
// (--cache-dir) overrides it.
const ConfCacheDir = "tfyarn.cache.dir"

// ConfCacheTrustedOwners is the client configuration key naming, comma
// separated, the administrators whose shared cache directories and
// adopted entries every job trusts, besides the HDFS superuser.
const ConfCacheTrustedOwners = "tfyarn.cache.trusted-owners"

// SharedCacheTrust is whom the client configuration says to trust in a
// shared cache directory (ConfCacheTrustedOwners), as hdfs options.
func SharedCacheTrust(conf *hadoopconf.Config) hdfs.SharedCacheOptions {
	if conf == nil {
		return hdfs.SharedCacheOptions{}
	}
	var admins []string
	for _, a := range conf.GetStrings(ConfCacheTrustedOwners) {
		if a = strings.TrimSpace(a); a != "" {
			admins = append(admins, a)
		}
	}
	from := ConfCacheTrustedOwners
	if len(admins) > 0 {
		from += " in " + conf.Source(ConfCacheTrustedOwners)
	}
	return hdfs.SharedCacheOptions{Admins: admins, AdminsFrom: from}
}

// cacheStore is where a job's files go: the user's own cache or a shared
// directory (hdfs.SharedCache).
type cacheStore interface {
	UploadOptions(ctx context.Context, local, name string, opts hdfs.UploadOptions) (hdfs.Resource, int64, error)
	Lookup(ctx context.Context, digest, name string, size int64, access hdfs.Access) (hdfs.Resource, bool, error)
}

// userCache is the per-user cache, /user/<user>/.tfyarn/cache.
type userCache struct{ fs *hdfs.FS }

func (u userCache) UploadOptions(ctx context.Context, local, name string, opts hdfs.UploadOptions) (hdfs.Resource, int64, error) {
	return u.fs.UploadCachedOptions(ctx, local, name, opts)
}

func (u userCache) Lookup(ctx context.Context, digest, name string, size int64, access hdfs.Access) (hdfs.Resource, bool, error) {
	return u.fs.LookupCached(ctx, digest, name, size, access)
}

// cacheDir is the shared cache directory the job uses, and where that
// was said; "" for the user's own cache.
func (j Job) cacheDir() (dir, from string) {
	if j.CacheDir != "" {
		return j.CacheDir, ""
	}
	if j.Conf != nil {
		if d, ok := j.Conf.Get(ConfCacheDir); ok && d != "" {
			return d, ConfCacheDir + " in " + j.Conf.Source(ConfCacheDir)
		}
	}
	return "", ""
}

// openCache picks the job's cache: a shared directory, checked before
// anything is uploaded, else the user's own. A shared directory someone
// untrusted could replace is not used: the user's own cache is, said in
// one line; so is, once, whom a shared directory's job trusts.
func (s *Submission) openCache(ctx context.Context) (cacheStore, error) {
	dir, from := s.job.cacheDir()
	if dir == "" {
		return userCache{s.FS}, nil
	}
	opts := SharedCacheTrust(s.job.Conf)
	opts.Notice = s.cb.OnCacheNotice
	sc, err := s.FS.OpenSharedCache(ctx, dir, opts)
	var ue *hdfs.UntrustedCacheError
	switch {
	case errors.As(err, &ue):
		s.notice(fmt.Sprintf("%s; shipping the job's files through your own cache %s instead", ue, hdfs.CacheDir(s.FS.User())))
		return userCache{s.FS}, nil
	case err != nil && from != "":
		return nil, fmt.Errorf("%w (set by %s)", err, from)
	case err != nil:
		return nil, err
	}
	s.notice(sc.Trusts())
	return sc, nil
}

func (s *Submission) notice(msg string) {
	if s.cb.OnCacheNotice != nil {
		s.cb.OnCacheNotice(msg)
	}
}

// cachedDigest is the sha256 a cache path is named by, in either layout.
func (s *Submission) cachedDigest(p string) (string, bool) {
	if sc, ok := s.cache.(*hdfs.SharedCache); ok {
		if d, ok := hdfs.SharedDigest(sc.Dir(), p); ok {
			return d, true
		}
	}
	return hdfs.CachedDigest(s.FS.User(), p)
}

// store is the submission's cache: the user's own until openCache chose.
func (s *Submission) store() cacheStore {
	if s.cache == nil {
		return userCache{s.FS}
	}
	return s.cache
}
