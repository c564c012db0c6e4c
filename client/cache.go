package client

import (
	"context"
	"errors"
	"path"
	"time"

	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/submit"
)

// CacheEntry is one file of the user's content-addressed HDFS cache
// (/user/<user>/.tfyarn/cache), where submissions keep what they ship.
type CacheEntry struct {
	Digest   string // hex SHA-256 of the content
	Name     string
	Path     string
	Size     int64
	Uploaded time.Time
	// LastUsed is the later of the upload and the NameNode's last read
	// (access times are coarse: dfs.namenode.accesstime.precision, 1 h by
	// default): what cleaning ages by.
	LastUsed time.Time
}

func cacheEntries(entries []hdfs.CacheEntry) []CacheEntry {
	out := make([]CacheEntry, 0, len(entries))
	for _, en := range entries {
		out = append(out, CacheEntry{Digest: en.Digest, Name: en.Name, Path: en.Path, Size: en.Size, Uploaded: en.ModTime, LastUsed: en.LastUsed()})
	}
	return out
}

// Cache lists the user's HDFS cache. Only connecting is bounded by
// CallTimeout: the listing takes as long as it takes, up to ctx.
func (c *Client) Cache(ctx context.Context) ([]CacheEntry, error) {
	fs, err := c.session.HDFS(ctx)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ListCache(ctx)
	if err != nil {
		return nil, err
	}
	return cacheEntries(entries), nil
}

// CleanCache removes the files of the user's HDFS cache last used longer
// ago than olderThan, and abandoned partial uploads, returning the files
// removed; with dryRun it only returns those it would remove. Removing a
// file an application is still localizing fails that application: keep
// olderThan well beyond the jobs' run time.
func (c *Client) CleanCache(ctx context.Context, olderThan time.Duration, dryRun bool) ([]CacheEntry, error) {
	fs, err := c.session.HDFS(ctx)
	if err != nil {
		return nil, err
	}
	if !dryRun {
		removed, err := fs.CleanCache(ctx, olderThan)
		if err != nil {
			return nil, err
		}
		return cacheEntries(removed), nil
	}
	all, err := fs.ListCache(ctx)
	if err != nil {
		return nil, err
	}
	var old []hdfs.CacheEntry
	cutoff := time.Now().Add(-olderThan)
	for _, en := range all {
		if en.LastUsed().Before(cutoff) {
			old = append(old, en)
		}
	}
	return cacheEntries(old), nil
}

// CleanStaging removes the user's staging directories
// (/user/<user>/.tfyarn/application_*) of applications that ended, which a
// crashed client and ApplicationMaster leave behind, and the tasks' results saved 7 days ago or
// more (State ResultsExpired), asking the
// ResourceManager about each: one it does not know counts as ended once 10
// minutes old; never one of a running or accepted application. It returns
// them; with dryRun it only returns them. The whole is bounded by a minute
// (or CallTimeout, if longer).
func (c *Client) CleanStaging(ctx context.Context, dryRun bool) ([]OrphanedStaging, error) {
	fs, err := c.session.HDFS(ctx)
	if err != nil {
		return nil, err
	}
	rm, err := c.session.RM()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, max(time.Minute, c.conn.CallTimeout))
	defer cancel()
	found, err := submit.FindOrphans(ctx, rm, fs, 0, !dryRun)
	var out []OrphanedStaging
	for _, o := range found {
		out = append(out, OrphanedStaging(o))
	}
	if err != nil {
		return out, err
	}
	old, err := cleanOldResults(ctx, fs, dryRun)
	for _, app := range old {
		out = append(out, OrphanedStaging{AppID: app, Path: hdfs.AppResultsDir(fs.User(), app), State: ResultsExpired})
	}
	return out, err
}

// ResultsExpired is the State of an application's results that CleanStaging removes: saved 7
// days ago or more.
const ResultsExpired = "results saved 7 days ago or more"

// OrphanedStaging is the staging directory of an application that ended
// (the client and the AM that would have removed it died).
type OrphanedStaging struct {
	AppID string `json:"app_id"`
	Path  string `json:"path"`
	// State is the application's final state per the RM, or "unknown"
	// (the RM forgot it, or it ran on an earlier incarnation of the RM).
	State string `json:"state"`
}

// MakeSharedCache makes dir (and missing parents) a cache directory shared
// by the cluster's users, mode 1777 like /tmp, for Job.CacheDir: what an
// administrator would do with hdfs dfs -mkdir and -chmod 1777, checked the
// way a submission checks Job.CacheDir. A directory that is already one is
// left as it is.
func (c *Client) MakeSharedCache(ctx context.Context, dir string) error {
	fs, err := c.session.HDFS(ctx)
	if err != nil {
		return err
	}
	return fs.MakeSharedCacheDir(ctx, dir, submit.SharedCacheTrust(c.session.Conf))
}

// CacheAdoption is one entry of a shared cache directory AdoptCache looked
// at.
type CacheAdoption struct {
	Path string
	// Owner is whose entry it was; Adopter whose it is once adopted (the
	// client's user).
	Owner   string
	Adopter string
	Size    int64
	// Trusted: the entry was the directory owner's or the superuser's
	// already, and is left as it is.
	Trusted bool
}

// AdoptCache makes other users' uploads to a shared cache directory usable
// by everyone: a submission uses only the entries of its user, of the
// HDFS superuser and of the administrators named in
// tfyarn.cache.trusted-owners (the directory's owner is one), since another user could
// rewrite theirs at any time. Adopting reads another user's entry into a
// copy in the client user's name, checks its sha256 against the entry's
// name and renames the copy over the entry (atomically). Only the
// directory's owner or the superuser may. target is the directory (every
// entry of another user is adopted) or one entry of it
// (DIR/<sha256>-<name>); oneEntry says which. each is told of every entry
// looked at, with the error that kept it from being adopted, if any; an
// error that stops the whole (the directory unusable, the user not allowed
// to adopt one entry) is returned instead.
func (c *Client) AdoptCache(ctx context.Context, target string, each func(CacheAdoption, error)) (oneEntry bool, err error) {
	target = path.Clean(target)
	dir := target
	if _, ok := hdfs.SharedDigest(path.Dir(target), target); ok {
		dir, oneEntry = path.Dir(target), true
	}
	fs, err := c.session.HDFS(ctx)
	if err != nil {
		return oneEntry, err
	}
	sc, err := fs.OpenSharedCache(ctx, dir, submit.SharedCacheTrust(c.session.Conf))
	if err != nil {
		return oneEntry, err
	}
	tell := func(a hdfs.Adopted, err error) {
		each(CacheAdoption{Path: a.Path, Owner: a.Owner, Adopter: fs.User(), Size: a.Size, Trusted: a.Trusted}, err)
	}
	if !oneEntry {
		return false, sc.AdoptAll(ctx, tell)
	}
	a, err := sc.Adopt(ctx, target)
	var na *hdfs.NotAdminError
	if errors.As(err, &na) {
		return true, err
	}
	tell(a, err)
	return true, nil
}
