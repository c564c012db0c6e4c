package hdfs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tfyarn/tfyarn/internal/atomicfile"
)

// VerifiedMemo remembers, on this machine, the shared cache entries of
// other users whose content we read and found to match their name, so
// the next submission does not read them again. One small JSON file per
// entry; a record holds only while the entry's length, modification time,
// owner and file id are the ones it was verified with: a file replaced or
// appended to since (or rewritten, which gives a new file id) is read
// again.
type VerifiedMemo struct {
	Dir string
}

// DefaultVerifiedMemo is under the user's cache directory
// ($XDG_CACHE_HOME/tfyarn/verified, ~/.cache/tfyarn/verified on Linux).
func DefaultVerifiedMemo() (*VerifiedMemo, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return nil, err
	}
	return &VerifiedMemo{Dir: filepath.Join(base, "tfyarn", "verified")}, nil
}

// verifiedEntry is one verification: the entry as it was when read.
type verifiedEntry struct {
	FS      string `json:"fs"` // the filesystem's URI
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ms"`
	Owner   string `json:"owner"`
	FileID  uint64 `json:"file_id"`
	SHA256  string `json:"sha256"`
}

func (m *VerifiedMemo) file(e verifiedEntry) string {
	sum := sha256.Sum256([]byte(e.FS + "\x00" + e.Path))
	return filepath.Join(m.Dir, hex.EncodeToString(sum[:16])+".json")
}

// holds reports whether e was verified before, exactly as it is now. A
// missing or unreadable record is a no: the entry is read again.
func (m *VerifiedMemo) holds(e verifiedEntry) bool {
	if m == nil {
		return false
	}
	b, err := os.ReadFile(m.file(e))
	if err != nil {
		return false
	}
	var got verifiedEntry
	return json.Unmarshal(b, &got) == nil && got == e
}

// remember records a successful verification, replacing the path's earlier
// record; written aside and renamed. Best effort for callers: a memo that
// cannot be written costs the next submission a read, nothing else.
func (m *VerifiedMemo) remember(e verifiedEntry) error {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(m.Dir, 0o700); err != nil {
		return fmt.Errorf("hdfs: verified memo: %w", err)
	}
	if err := atomicfile.Write(m.file(e), b, 0o600); err != nil {
		return fmt.Errorf("hdfs: verified memo: %w", err)
	}
	return nil
}
