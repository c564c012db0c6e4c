package envpack

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tfyarn/tfyarn/internal/atomicfile"
)

// Packed is what a cache remembers of one packing: enough to find the
// archive in the content-addressed HDFS cache without packing again.
type Packed struct {
	Print        string    `json:"print"` // Print.Sum the archive was packed from
	SHA256       string    `json:"sha256"`
	ArchiveBytes int64     `json:"archive_bytes"`
	Manifest     *Manifest `json:"manifest,omitempty"` // TargetEnv and TargetEnvLayers only
	// Layers are PackLayers' (TargetEnvLayers only); SHA256 and
	// ArchiveBytes then stand for all of them (LayersDigest, the sum).
	Layers []Layer `json:"layers,omitempty"`
}

// LayersDigest is one hex sha256 for a layered environment: over its
// layers' digests, in order.
func LayersDigest(layers []Layer) string {
	h := sha256.New()
	for _, l := range layers {
		h.Write([]byte(l.SHA256 + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// PackCache maps a directory's fingerprint to the archive packed from it,
// one small JSON file per directory and target (a changed directory
// replaces its entry, so the cache grows with the number of directories,
// not of changes). Entries are hints: a reader still checks that the
// archive exists where it is looked up.
type PackCache struct {
	Dir string
}

// DefaultPackCache is the cache under the user's cache directory
// ($XDG_CACHE_HOME/tfyarn/packs, ~/.cache/tfyarn/packs on Linux).
func DefaultPackCache() (*PackCache, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return nil, err
	}
	return &PackCache{Dir: filepath.Join(base, "tfyarn", "packs")}, nil
}

// entryPath is the file of dir's entry: named by a hash of the target and
// the absolute path, so any path fits in one file name.
func (c *PackCache) entryPath(dir string, t Target) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(strconv.Itoa(int(t)) + "\x00" + abs))
	return filepath.Join(c.Dir, hex.EncodeToString(sum[:16])+".json"), nil
}

// Lookup returns the archive remembered for dir when it was packed from
// exactly print p. A missing, unreadable or stale entry is a miss.
func (c *PackCache) Lookup(dir string, t Target, p Print) (Packed, bool) {
	f, err := c.entryPath(dir, t)
	if err != nil {
		return Packed{}, false
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return Packed{}, false
	}
	var e Packed
	if json.Unmarshal(b, &e) != nil || e.Print != p.Sum || len(e.SHA256) != 64 || e.ArchiveBytes < 0 {
		return Packed{}, false
	}
	if t == TargetEnv && e.Manifest == nil {
		return Packed{}, false
	}
	if t == TargetEnvLayers && (e.Manifest == nil || len(e.Layers) == 0) {
		return Packed{}, false
	}
	return e, true
}

// Previous returns dir's entry whatever print it was packed from: the
// layers PackLayers may take again (LayerOptions.Known) after a change.
func (c *PackCache) Previous(dir string, t Target) (Packed, bool) {
	f, err := c.entryPath(dir, t)
	if err != nil {
		return Packed{}, false
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return Packed{}, false
	}
	var e Packed
	if json.Unmarshal(b, &e) != nil {
		return Packed{}, false
	}
	return e, true
}

// Store remembers e for dir (e.Print set by the caller), replacing the
// directory's previous entry. The file is written aside and renamed, so a
// concurrent reader sees the old entry or the new one.
func (c *PackCache) Store(dir string, t Target, e Packed) error {
	if e.Print == "" || len(e.SHA256) != 64 {
		return errors.New("envpack: pack cache: incomplete entry")
	}
	f, err := c.entryPath(dir, t)
	if err != nil {
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return fmt.Errorf("envpack: pack cache: %w", err)
	}
	if err := atomicfile.Write(f, b, 0o600); err != nil {
		return fmt.Errorf("envpack: pack cache: %w", err)
	}
	return nil
}
