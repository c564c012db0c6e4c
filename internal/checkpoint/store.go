package checkpoint

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// Store is the filesystem checkpoints are kept in: HDFS (package hdfs's
// FS), or a local directory in tests. Paths are absolute, slash-separated.
type Store interface {
	// ReadDir lists a directory; a missing one is os.ErrNotExist (wrapped).
	ReadDir(ctx context.Context, p string) ([]os.FileInfo, error)
	// MakePrivateDir makes p and its missing parents, 0700, and refuses
	// one another user owns.
	MakePrivateDir(ctx context.Context, p string) error
	// WritePrivateFile creates p, 0600, which must not exist.
	WritePrivateFile(ctx context.Context, p string, r io.Reader) (int64, error)
	// ReadFileTo copies the file p into w.
	ReadFileTo(ctx context.Context, p string, w io.Writer) (int64, error)
	// RenameNoReplace renames src to dst, failing when dst exists.
	RenameNoReplace(ctx context.Context, src, dst string) error
	// RemoveAll removes p and what is under it; a missing p is fine.
	RemoveAll(ctx context.Context, p string) error
}

// A checkpoint's ID is the time its save began, in milliseconds since
// 1970 (15 digits, so names sort by time), and the application that saved
// it: "001795638667412-application_1795638545376_0002".
var idRE = regexp.MustCompile(`^([0-9]{15})-(application_[0-9]+_[0-9]+)$`)

// tempPrefix starts a checkpoint's name while it is written.
const tempPrefix = ".saving-"

// NewID is the ID of a checkpoint app begins to save at t.
func NewID(t time.Time, app string) string { return fmt.Sprintf("%015d-%s", t.UnixMilli(), app) }

// Checkpoint is one complete checkpoint of one task.
type Checkpoint struct {
	Slot string    // the task's: "worker-1"
	ID   string    // its directory's name
	App  string    // the application that saved it
	Time time.Time // when its save began
}

// parseID reads a checkpoint directory's name; ok is false for anything
// else (a save under way or cut short, a stranger's file).
func parseID(slot, name string) (Checkpoint, bool) {
	m := idRE.FindStringSubmatch(name)
	if m == nil {
		return Checkpoint{}, false
	}
	ms, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return Checkpoint{}, false
	}
	return Checkpoint{Slot: slot, ID: name, App: m[2], Time: time.UnixMilli(ms).UTC()}, true
}

// Complete lists the complete checkpoints of slot in dir, oldest first;
// none when the slot has no directory yet.
func Complete(ctx context.Context, st Store, dir, slot string) ([]Checkpoint, error) {
	entries, err := st.ReadDir(ctx, path.Join(dir, slot))
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []Checkpoint
	for _, fi := range entries {
		if c, ok := parseID(slot, fi.Name()); ok && fi.IsDir() {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// restorable are the complete checkpoints of slot that spec lets a task
// restore (with Fresh, only spec.App's own), oldest first.
func restorable(ctx context.Context, st Store, spec Spec, slot string) ([]Checkpoint, error) {
	all, err := Complete(ctx, st, spec.Dir, slot)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, c := range all {
		if !spec.Fresh || c.App == spec.App {
			out = append(out, c)
		}
	}
	return out, nil
}

// staleSave is how old a save under way must be before another one of the
// same task removes it as cut short.
const staleSave = 10 * time.Minute

// prune removes the checkpoints of slot beyond the newest keep, and saves
// cut short (temporary directories older than staleSave).
func prune(ctx context.Context, st Store, dir, slot string, keep int, now time.Time) error {
	all, err := Complete(ctx, st, dir, slot)
	if err != nil {
		return err
	}
	for len(all) > keep {
		if err := st.RemoveAll(ctx, path.Join(dir, slot, all[0].ID)); err != nil {
			return err
		}
		all = all[1:]
	}
	entries, err := st.ReadDir(ctx, path.Join(dir, slot))
	if err != nil {
		return err
	}
	for _, fi := range entries {
		name := fi.Name()
		if len(name) > len(tempPrefix) && name[:len(tempPrefix)] == tempPrefix && now.Sub(fi.ModTime()) > staleSave {
			if err := st.RemoveAll(ctx, path.Join(dir, slot, name)); err != nil {
				return err
			}
		}
	}
	return nil
}
