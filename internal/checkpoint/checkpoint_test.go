package checkpoint

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// dirStore is a Store over a local directory, standing in for HDFS (whose
// own implementation the end-to-end tests use). failWrites, when above 0,
// makes that many-th file write fail after part of its bytes: a save cut
// short.
type dirStore struct {
	root       string
	writes     int
	failWrites int
}

func (s *dirStore) local(p string) string { return filepath.Join(s.root, filepath.FromSlash(p)) }

func (s *dirStore) ReadDir(_ context.Context, p string) ([]os.FileInfo, error) {
	entries, err := os.ReadDir(s.local(p))
	if err != nil {
		return nil, err
	}
	var out []os.FileInfo
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	return out, nil
}

func (s *dirStore) MakePrivateDir(_ context.Context, p string) error {
	return os.MkdirAll(s.local(p), 0o700)
}

func (s *dirStore) WritePrivateFile(_ context.Context, p string, r io.Reader) (int64, error) {
	s.writes++
	f, err := os.OpenFile(s.local(p), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if s.failWrites > 0 && s.writes == s.failWrites {
		n, _ := io.CopyN(f, r, 3)
		return n, errors.New("the DataNode went away")
	}
	return io.Copy(f, r)
}

func (s *dirStore) ReadFileTo(_ context.Context, p string, w io.Writer) (int64, error) {
	f, err := os.Open(s.local(p))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(w, f)
}

func (s *dirStore) RenameNoReplace(_ context.Context, src, dst string) error {
	if _, err := os.Lstat(s.local(dst)); err == nil {
		return os.ErrExist
	}
	return os.Rename(s.local(src), s.local(dst))
}

func (s *dirStore) RemoveAll(_ context.Context, p string) error { return os.RemoveAll(s.local(p)) }

const testApp = "application_1795638545376_0002"

// testClock is the keepers' clock in milliseconds: a second later at each reading, shared, so
// that no two saves of a test get one ID.
var testClock atomic.Int64

func init() { testClock.Store(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).UnixMilli()) }

// newKeeper is a keeper of task slot in a fresh local directory, over st,
// whose clock steps a second at each reading.
func newKeeper(t *testing.T, st Store, slot string, spec Spec) *Keeper {
	t.Helper()
	dir := t.TempDir()
	return &Keeper{
		Store: st, Spec: spec, Slot: slot,
		Local: filepath.Join(dir, "checkpoint"), Scratch: filepath.Join(dir, "scratch"),
		Logf: t.Logf,
		Now:  func() time.Time { return time.UnixMilli(testClock.Add(1000)).UTC() },
	}
}

func testSpec(app string) Spec {
	return Spec{Dir: "/user/alice/.tfyarn/checkpoints/job", Keep: 2, App: app, Lead: "chief-0", User: "alice"}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// markAndSave writes files into k's directory, marks them complete and has
// k save them.
func markAndSave(t *testing.T, k *Keeper, files map[string]string) {
	t.Helper()
	for name, content := range files {
		write(t, k.Local, name, content)
	}
	write(t, k.Local, CompleteMark, "")
	if marked, err := k.SaveMarked(context.Background()); err != nil || !marked {
		t.Fatalf("SaveMarked = %v, %v; want a save", marked, err)
	}
	if _, err := os.Stat(filepath.Join(k.Local, CompleteMark)); !os.IsNotExist(err) {
		t.Fatalf("the mark is still there after the save (%v)", err)
	}
}

func restoreInto(t *testing.T, st Store, slot string, spec Spec) (*Keeper, string) {
	t.Helper()
	k := newKeeper(t, st, slot, spec)
	id, err := k.Restore(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return k, id
}

func TestSaveThenRestoreOnAnotherNode(t *testing.T) {
	st := &dirStore{root: t.TempDir()}
	k := newKeeper(t, st, "chief-0", testSpec(testApp))
	if id, err := k.Restore(context.Background()); err != nil || id != "" {
		t.Fatalf("Restore of nothing = %q, %v", id, err)
	}
	markAndSave(t, k, map[string]string{"model/weights": "epoch 1", "step": "100"})
	markAndSave(t, k, map[string]string{"model/weights": "epoch 2", "step": "200"})

	k2, id := restoreInto(t, st, "chief-0", testSpec("application_1795638545376_0003"))
	if !strings.HasSuffix(id, testApp) || read(t, k2.Local, "step") != "200" || read(t, k2.Local, "model/weights") != "epoch 2" {
		t.Fatalf("restored %q: step %q", id, read(t, k2.Local, "step"))
	}
	if _, err := os.Stat(filepath.Join(k2.Local, SavedFile)); !os.IsNotExist(err) {
		t.Fatalf("tfyarn's own %s was saved and restored", SavedFile)
	}
	if saved := read(t, k.Local, SavedFile); !strings.Contains(saved, `"files":2`) {
		t.Fatalf("%s = %q", SavedFile, saved)
	}
}

func TestKeepsTheLastN(t *testing.T) {
	st := &dirStore{root: t.TempDir()}
	k := newKeeper(t, st, "worker-1", testSpec(testApp))
	for _, step := range []string{"1", "2", "3", "4"} {
		markAndSave(t, k, map[string]string{"step": step})
	}
	all, err := Complete(context.Background(), st, k.Spec.Dir, "worker-1")
	if err != nil || len(all) != 2 {
		t.Fatalf("Complete = %v, %v; want the last 2", all, err)
	}
	_, id := restoreInto(t, st, "worker-1", testSpec(testApp))
	if id != all[1].ID {
		t.Fatalf("restored %s, want the newest %s", id, all[1].ID)
	}
}

func TestASaveCutShortIsNeverRestored(t *testing.T) {
	st := &dirStore{root: t.TempDir()}
	k := newKeeper(t, st, "chief-0", testSpec(testApp))
	markAndSave(t, k, map[string]string{"a": "good a", "b": "good b"})
	st.failWrites = st.writes + 2 // the second file of the next save fails half-way
	write(t, k.Local, "a", "new a")
	write(t, k.Local, "b", "new b")
	write(t, k.Local, CompleteMark, "")
	if _, err := k.SaveMarked(context.Background()); err == nil || !strings.Contains(err.Error(), "DataNode went away") {
		t.Fatalf("SaveMarked = %v, want the write's failure", err)
	}
	// A save killed with its launcher leaves its temporary directory.
	write(t, st.local(k.Spec.Dir+"/chief-0"), tempPrefix+NewID(time.Now(), testApp)+"/a", "half")

	k2, _ := restoreInto(t, st, "chief-0", testSpec(testApp))
	if a, b := read(t, k2.Local, "a"), read(t, k2.Local, "b"); a != "good a" || b != "good b" {
		t.Fatalf("restored a=%q b=%q, want the last whole checkpoint", a, b)
	}
}

func TestFreshIgnoresEarlierJobs(t *testing.T) {
	st := &dirStore{root: t.TempDir()}
	markAndSave(t, newKeeper(t, st, "chief-0", testSpec(testApp)), map[string]string{"step": "7"})
	spec := testSpec("application_1795638545376_0009")
	spec.Fresh = true
	k, id := restoreInto(t, st, "chief-0", spec)
	if entries, _ := os.ReadDir(k.Local); id != "" || len(entries) != 0 {
		t.Fatalf("--checkpoint-fresh restored %q (%d files)", id, len(entries))
	}
	markAndSave(t, k, map[string]string{"step": "1"})
	if _, id := restoreInto(t, st, "chief-0", spec); !strings.HasSuffix(id, spec.App) {
		t.Fatalf("a restart of the fresh job restored %q, want its own", id)
	}
}

func TestTasksRestoreEveryTasksTheLeadsThenTheirOwn(t *testing.T) {
	st := &dirStore{root: t.TempDir()}
	markAndSave(t, newKeeper(t, st, "chief-0", testSpec(testApp)), map[string]string{"checkpoint": "chief's", ".metadata": "shared"})
	markAndSave(t, newKeeper(t, st, "worker-1", testSpec(testApp)), map[string]string{"shard-1": "worker 1's"})
	k, _ := restoreInto(t, st, "worker-1", testSpec(testApp))
	if read(t, k.Local, "checkpoint") != "chief's" || read(t, k.Local, "shard-1") != "worker 1's" {
		t.Fatal("worker-1 did not get both the chief's files and its own")
	}
	k2, _ := restoreInto(t, st, "worker-2", testSpec(testApp))
	if read(t, k2.Local, ".metadata") != "shared" || read(t, k2.Local, "shard-1") != "worker 1's" {
		t.Fatal("a task without checkpoints of its own did not get the chief's and the others'")
	}
	// A name every task has: the task's own wins, else the lead's.
	markAndSave(t, newKeeper(t, st, "worker-1", testSpec(testApp)), map[string]string{"checkpoint": "worker 1's"})
	if k, _ := restoreInto(t, st, "worker-1", testSpec(testApp)); read(t, k.Local, "checkpoint") != "worker 1's" {
		t.Fatal("worker-1 did not get its own file over the chief's")
	}
	if k, _ := restoreInto(t, st, "worker-2", testSpec(testApp)); read(t, k.Local, "checkpoint") != "chief's" {
		t.Fatal("worker-2 did not get the chief's file over worker-1's")
	}
}

func TestFinishSavesAfterACleanExitOnly(t *testing.T) {
	st := &dirStore{root: t.TempDir()}
	other := newKeeper(t, st, "worker-1", testSpec(testApp))
	if _, err := other.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	write(t, other.Local, "step", "done")
	if err := other.Finish(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if all, _ := Complete(context.Background(), st, other.Spec.Dir, "worker-1"); len(all) != 0 {
		t.Fatal("a task other than the lead saved unmarked files at its exit")
	}
	spec := testSpec(testApp)
	spec.Lead = "worker-0"
	k := newKeeper(t, st, "worker-0", spec)
	if _, err := k.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := k.Finish(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if all, _ := Complete(context.Background(), st, k.Spec.Dir, "worker-0"); len(all) != 0 {
		t.Fatal("an empty directory was saved")
	}
	write(t, k.Local, "step", "half-written")
	if err := k.Finish(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if all, _ := Complete(context.Background(), st, k.Spec.Dir, "worker-0"); len(all) != 0 {
		t.Fatal("a failed program's unmarked files were saved")
	}
	write(t, k.Local, "step", "done")
	if err := k.Finish(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if all, _ := Complete(context.Background(), st, k.Spec.Dir, "worker-0"); len(all) != 1 {
		t.Fatalf("a clean exit's files: %d checkpoints, want 1", len(all))
	}
}

func TestLinksAreNotFollowed(t *testing.T) {
	st := &dirStore{root: t.TempDir()}
	k := newKeeper(t, st, "chief-0", testSpec(testApp))
	secret := filepath.Join(t.TempDir(), "secret")
	write(t, filepath.Dir(secret), "secret", "not the program's")
	if err := os.MkdirAll(k.Local, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(k.Local, "link")); err != nil {
		t.Fatal(err)
	}
	markAndSave(t, k, map[string]string{"step": "1"})
	k2, _ := restoreInto(t, st, "chief-0", testSpec(testApp))
	if _, err := os.Lstat(filepath.Join(k2.Local, "link")); !os.IsNotExist(err) {
		t.Fatal("a link in the checkpoint directory was saved")
	}
}

func TestWatchSavesMarksFasterOnceWarned(t *testing.T) {
	st := &dirStore{root: t.TempDir()}
	k := newKeeper(t, st, "chief-0", testSpec(testApp))
	if _, err := k.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	urgent := make(chan struct{})
	done := make(chan struct{})
	go func() { k.Watch(ctx, urgent); close(done) }()
	close(urgent)
	write(t, k.Local, "step", "5")
	write(t, k.Local, CompleteMark, "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(k.Local, SavedFile)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the marked checkpoint was not saved within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
}

func TestSpecRoundTripAndRefusals(t *testing.T) {
	s := testSpec(testApp)
	back, err := ParseSpec(s.Encode())
	if err != nil || back.Dir != s.Dir || back.Lead != s.Lead {
		t.Fatalf("ParseSpec(Encode) = %+v, %v", back, err)
	}
	for _, bad := range []string{`{}`, `{"dir":"relative","keep":2,"app":"a","lead":"chief-0","user":"u"}`, `{"dir":"/x/../y","keep":2,"app":"a","lead":"l","user":"u"}`, `{"dir":"/x","keep":0,"app":"a","lead":"l","user":"u"}`} {
		if _, err := ParseSpec(base64.RawURLEncoding.EncodeToString([]byte(bad))); err == nil {
			t.Errorf("ParseSpec(%s) accepted", bad)
		}
	}
	for _, name := range []string{"", ".", "..", "a/b"} {
		if CheckJobName(name) == nil {
			t.Errorf("CheckJobName(%q) accepted", name)
		}
	}
}
