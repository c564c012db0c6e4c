package hdfs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Permissions. What a user ships and runs is theirs alone unless they
// chose a shared cache directory (SharedCache):
//   - .tfyarn and the cache's directories are 0711: others may pass
//     through, which YARN's public localizer needs for the files that are
//     public (Access), but not list them. A cached file's name is its
//     content's sha256, which only those who hold the content can know.
//   - cached files are 0644 (Public: the tfyarn binary, environments) or
//     0600 (Private: scripts, --files, --archives, source directories,
//     which can hold secrets), see Access;
//   - the history (command lines, stderr tails) is 0700/0600, staging
//     directories (job files, credentials) 0700.
const (
	cacheDirPerm    = 0o711
	publicFilePerm  = 0o644 // Public cache files and shared cache entries
	stagingDirPerm  = 0o700
	stagingFilePerm = 0o644 // as MapReduce's job files: the 0700 directory is the fence
	privateFilePerm = 0o600 // status keys, history records, Private cache files
	historyDirPerm  = 0o700
)

// HomeDir is the user's HDFS home directory, /user/<user>, as Hadoop's
// FileSystem.getHomeDirectory has it.
func HomeDir(user string) string { return path.Join("/user", user) }

// BaseDir is tfyarn's directory under the user's home.
func BaseDir(user string) string { return path.Join(HomeDir(user), ".tfyarn") }

// CacheDir is the root of the user's content-addressed cache.
func CacheDir(user string) string { return path.Join(BaseDir(user), "cache") }

// CachePath is where a file of the given SHA-256 (hex) and name is cached.
func CachePath(user, digest, name string) string {
	return path.Join(CacheDir(user), digest, name)
}

// StagingDir is an application's staging directory.
func StagingDir(user, appID string) string { return path.Join(BaseDir(user), appID) }

var (
	digestRE = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// tempRE matches the names tempName makes, so listings can skip uploads
	// in progress and cleaning can find abandoned ones.
	tempRE = regexp.MustCompile(`^\..+\.[0-9a-f]{16}\.tmp$`)
)

// tempName is a unique name beside the final one: in the same directory, so
// the rename that publishes it stays within one directory.
func tempName(name string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "." + name + "." + hex.EncodeToString(b[:]) + ".tmp", nil
}

func isTempName(name string) bool { return tempRE.MatchString(name) }

// checkName accepts one path component: the cache and staging layout must not
// be escaped or nested into by a caller-supplied name.
func checkName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("invalid file name %q", name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("invalid file name %q: must not contain '/'", name)
	case strings.Contains(name, ":"):
		// Hadoop's Path rejects ':' in a relative name (it reads as a scheme).
		return fmt.Errorf("invalid file name %q: must not contain ':'", name)
	}
	return nil
}

// checkAppID keeps application ids to one plain path component.
func checkAppID(appID string) error {
	if err := checkName(appID); err != nil {
		return fmt.Errorf("invalid application id %q", appID)
	}
	if strings.HasPrefix(appID, ".") || appID == "cache" {
		return fmt.Errorf("invalid application id %q: reserved", appID)
	}
	return nil
}

// CachedDigest is the SHA-256 (hex) a cache path (CachePath) is named by;
// ok is false for a path outside the user's cache layout.
func CachedDigest(user, p string) (digest string, ok bool) {
	dir := path.Dir(p)
	digest = path.Base(dir)
	if path.Dir(dir) != CacheDir(user) || !digestRE.MatchString(digest) {
		return "", false
	}
	return digest, true
}

// CheckpointsDir holds the user's jobs' checkpoints by job name, where
// `run --checkpoint` without a directory puts them (package checkpoint).
func CheckpointsDir(user string) string { return path.Join(BaseDir(user), "checkpoints") }
