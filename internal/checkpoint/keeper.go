package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Polling intervals for CompleteMark: normally, and once the task is
// warned of a preemption, when every millisecond before the kill counts.
const (
	pollInterval       = 500 * time.Millisecond
	urgentPollInterval = 20 * time.Millisecond
)

// SaveTimeout bounds one save, and the save at the program's exit.
const SaveTimeout = 30 * time.Minute

// Keeper keeps one task's checkpoints: it restores the latest into Local
// and saves what the program marks there.
type Keeper struct {
	Store Store
	Spec  Spec
	Slot  string // the task's (Slot)
	// Local is the program's checkpoint directory (EnvDir); Scratch a
	// directory beside it for the copies marked checkpoints are saved
	// from. Both local and absolute.
	Local, Scratch string
	Logf           func(format string, args ...any)
	Now            func() time.Time // default time.Now

	mu sync.Mutex // one save at a time
	// saved is the fingerprint of Local as last restored or saved: the
	// exit's save is skipped when nothing changed.
	saved string
	snaps int
}

// SavedRecord is SavedFile's content.
type SavedRecord struct {
	ID    string `json:"id"`
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	Files int    `json:"files"`
	Step  *int64 `json:"step,omitempty"` // the step the program named in its mark
}

func (k *Keeper) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

func (k *Keeper) logf(format string, args ...any) {
	if k.Logf != nil {
		k.Logf(format, args...)
	}
}

// Restore makes Local and fills it with the latest checkpoint of every
// task of the job: the other tasks' first, then the lead task's (see
// Spec.Lead), then the task's own, each over the ones before. So files of
// one name come from the task itself, else from the lead. It returns the
// ID restored (the task's own when it has one, else the lead's, else
// another task's), "" for none. On an error Local is left empty: the
// program starts without a checkpoint rather than from part of one.
func (k *Keeper) Restore(ctx context.Context) (string, error) {
	if err := os.MkdirAll(k.Local, 0o700); err != nil {
		return "", err
	}
	started := k.now()
	slots, err := k.restoreOrder(ctx)
	if err != nil {
		return "", fmt.Errorf("restoring from %s: %w", k.Spec.Dir, err)
	}
	chosen, err := k.restoreChoice(ctx, slots)
	if err != nil {
		return "", fmt.Errorf("restoring from %s: %w", k.Spec.Dir, err)
	}
	var id string
	var bytes int64
	var files int
	for _, slot := range slots {
		c, ok := chosen[slot]
		if ok {
			var b int64
			var f int
			b, f, err = download(ctx, k.Store, path.Join(k.Spec.Dir, slot, c.ID), k.Local, true)
			bytes, files, id = bytes+b, files+f, c.ID
		}
		if err != nil {
			k.clearLocal()
			return "", fmt.Errorf("restoring %s's checkpoint from %s: %w", slot, k.Spec.Dir, err)
		}
	}
	k.saved = fingerprint(k.Local)
	if id != "" {
		k.logf("restored checkpoint %s from %s (%d files, %d bytes) in %s", id, k.Spec.Dir, files, bytes, k.now().Sub(started).Round(time.Millisecond))
	}
	return id, nil
}

// restoreOrder is the job's task directories in the order Restore lays
// them down: the others (by name), the lead's, the task's own.
func (k *Keeper) restoreOrder(ctx context.Context) ([]string, error) {
	entries, err := k.Store.ReadDir(ctx, k.Spec.Dir)
	if err != nil && !isNotExist(err) {
		return nil, err
	}
	var slots []string
	for _, fi := range entries {
		if name := fi.Name(); fi.IsDir() && name != k.Spec.Lead && name != k.Slot {
			slots = append(slots, name)
		}
	}
	sort.Strings(slots)
	slots = append(slots, k.Spec.Lead)
	if k.Slot != k.Spec.Lead {
		slots = append(slots, k.Slot)
	}
	return slots, nil
}

func (k *Keeper) clearLocal() {
	entries, _ := os.ReadDir(k.Local)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(k.Local, e.Name()))
	}
}

// Watch saves every checkpoint the program marks until ctx ends, polling
// faster once urgent is closed (the preemption warning). A save under way
// when ctx ends is finished.
func (k *Keeper) Watch(ctx context.Context, urgent <-chan struct{}) {
	interval := pollInterval
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-urgent:
			urgent, interval = nil, urgentPollInterval
		case <-t.C:
		}
		if _, err := k.SaveMarked(context.WithoutCancel(ctx)); err != nil {
			k.logf("saving a checkpoint: %v", err)
		}
		t.Reset(interval)
	}
}

// SaveMarked saves Local when the program has marked it complete: it
// copies it aside, removes the mark and uploads the copy. It reports
// whether there was a mark.
func (k *Keeper) SaveMarked(ctx context.Context) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	mark := filepath.Join(k.Local, CompleteMark)
	if _, err := os.Lstat(mark); err != nil {
		return false, nil
	}
	step, err := markedStep(mark)
	if err != nil {
		k.logf("saving the checkpoint without a step: %v", err)
	}
	k.snaps++
	snap := filepath.Join(k.Scratch, fmt.Sprintf("snapshot-%d", k.snaps))
	os.RemoveAll(snap)
	if err := os.MkdirAll(k.Scratch, 0o700); err != nil {
		return true, err
	}
	err = copyTree(k.Local, snap)
	fp := fingerprint(k.Local)
	if rerr := os.Remove(mark); err == nil && rerr != nil {
		err = rerr
	}
	defer os.RemoveAll(snap)
	if err != nil {
		return true, fmt.Errorf("copying %s aside: %w", k.Local, err)
	}
	if err := k.save(ctx, snap, step); err != nil {
		return true, err
	}
	k.saved = fp
	return true, nil
}

// Finish saves at the program's exit: a checkpoint it marked, else, when
// the lead task's program exited 0 (ok) and left Local other than last
// restored or saved, what it left. Another task's directory holds the
// lead's files it restored: saved unmarked, an old copy of them would be
// restored over the lead's newer ones. Call it once Watch has returned.
func (k *Keeper) Finish(ctx context.Context, ok bool) error {
	ctx, cancel := context.WithTimeout(ctx, SaveTimeout)
	defer cancel()
	marked, err := k.SaveMarked(ctx)
	if marked || !ok || k.Slot != k.Spec.Lead {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	fp := fingerprint(k.Local)
	if fp == k.saved || fp == fingerprint("") {
		return nil
	}
	if err := k.save(ctx, k.Local, nil); err != nil {
		return err
	}
	k.saved = fp
	return nil
}

// save uploads src as a new checkpoint, with its step when the program
// named one: into a temporary directory, renamed to its ID once whole; then
// it removes the checkpoints beyond Spec.Keep and tells the program
// (SavedFile).
func (k *Keeper) save(ctx context.Context, src string, step *int64) error {
	ctx, cancel := context.WithTimeout(ctx, SaveTimeout)
	defer cancel()
	started := k.now()
	id := NewID(started, k.Spec.App)
	slotDir := path.Join(k.Spec.Dir, k.Slot)
	tmp, final := path.Join(slotDir, tempPrefix+id), path.Join(slotDir, id)
	bytes, files, err := upload(ctx, k.Store, src, tmp)
	if err == nil && step != nil {
		_, err = k.Store.WritePrivateFile(ctx, path.Join(tmp, StepFile), strings.NewReader(strconv.FormatInt(*step, 10)+"\n"))
	}
	if err == nil {
		err = k.Store.RenameNoReplace(ctx, tmp, final)
	}
	if err != nil {
		// Best effort: a later save removes what is left (prune).
		_ = k.Store.RemoveAll(context.WithoutCancel(ctx), tmp)
		return fmt.Errorf("checkpoint %s: %w", final, err)
	}
	k.logf("saved checkpoint %s (%d files, %d bytes) in %s", final, files, bytes, k.now().Sub(started).Round(time.Millisecond))
	if err := prune(ctx, k.Store, k.Spec.Dir, k.Slot, k.Spec.Keep, k.now()); err != nil {
		k.logf("removing old checkpoints of %s: %v", slotDir, err)
	}
	line, _ := json.Marshal(SavedRecord{ID: id, Path: final, Bytes: bytes, Files: files, Step: step})
	return writeAside(filepath.Join(k.Local, SavedFile), append(line, '\n'))
}

// writeAside puts data at p whole: written beside it, then renamed.
func writeAside(p string, data []byte) error {
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// fingerprint sums the names, sizes and modification times of what upload
// would save from dir ("" or a missing or empty directory: the same sum).
func fingerprint(dir string) string {
	h := sha256.New()
	if dir != "" {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if rel != "." && !strings.Contains(rel, string(filepath.Separator)) && strings.HasPrefix(rel, reservedPrefix) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if info, err := d.Info(); err == nil && rel != "." {
				fmt.Fprintf(h, "%q %v %d %d\n", rel, d.IsDir(), info.Size(), info.ModTime().UnixNano())
			}
			return nil
		})
	}
	return hex.EncodeToString(h.Sum(nil))
}
