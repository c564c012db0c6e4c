package submit

import (
	"context"
	"fmt"

	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// ConfCacheDir is the client configuration key (core-site.xml or
// yarn-site.xml under HADOOP_CONF_DIR) naming the cluster's shared cache
// directory, for an administrator to set once for every user; Job.CacheDir
// (--cache-dir) overrides it.
const ConfCacheDir = "tfyarn.cache.dir"

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
// anything is uploaded, else the user's own.
func (s *Submission) openCache(ctx context.Context) (cacheStore, error) {
	dir, from := s.job.cacheDir()
	if dir == "" {
		return userCache{s.FS}, nil
	}
	sc, err := s.FS.OpenSharedCache(ctx, dir, hdfs.SharedCacheOptions{Notice: s.cb.OnCacheNotice})
	if err != nil && from != "" {
		return nil, fmt.Errorf("%w (set by %s)", err, from)
	}
	return sc, err
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
