package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// markStepAndSave is markAndSave with mark as the mark's content (the
// step, as mark_complete(step=N) writes it).
func markStepAndSave(t *testing.T, k *Keeper, mark string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		write(t, k.Local, name, content)
	}
	write(t, k.Local, CompleteMark, mark)
	if marked, err := k.SaveMarked(context.Background()); err != nil || !marked {
		t.Fatalf("SaveMarked = %v, %v; want a save", marked, err)
	}
}

// TestRestoreTakesTheNewestStepEveryTaskHas: when every saving task's
// newest checkpoint names its step, each task restores the newest step all
// of them have (the chief's save of step 20 went through, worker 1's was
// cut short: both resume at 10). A newest checkpoint without a step, or no
// step in common, falls back to each task's newest.
func TestRestoreTakesTheNewestStepEveryTaskHas(t *testing.T) {
	st := &dirStore{root: t.TempDir()}
	chief := newKeeper(t, st, "chief-0", testSpec(testApp))
	worker := newKeeper(t, st, "worker-1", testSpec(testApp))
	markStepAndSave(t, chief, "10\n", map[string]string{"shard-0": "chief at 10"})
	markStepAndSave(t, worker, "10", map[string]string{"shard-1": "worker at 10"})
	markStepAndSave(t, chief, "20\n", map[string]string{"shard-0": "chief at 20"})
	if saved := read(t, chief.Local, SavedFile); !strings.Contains(saved, `"step":20`) {
		t.Fatalf("%s = %q, want the step", SavedFile, saved)
	}
	for _, slot := range []string{"chief-0", "worker-1", "worker-2"} {
		k, _ := restoreInto(t, st, slot, testSpec(testApp))
		if a, b := read(t, k.Local, "shard-0"), read(t, k.Local, "shard-1"); a != "chief at 10" || b != "worker at 10" {
			t.Fatalf("%s restored %q and %q, want both at step 10", slot, a, b)
		}
		if _, err := os.Stat(filepath.Join(k.Local, StepFile)); !os.IsNotExist(err) {
			t.Fatalf("%s restored tfyarn's %s (%v)", slot, StepFile, err)
		}
	}

	// Worker 1 catches up: both at 20.
	markStepAndSave(t, worker, "20", map[string]string{"shard-1": "worker at 20"})
	if k, _ := restoreInto(t, st, "worker-1", testSpec(testApp)); read(t, k.Local, "shard-0") != "chief at 20" || read(t, k.Local, "shard-1") != "worker at 20" {
		t.Fatal("both tasks saved step 20, and it was not restored")
	}

	// Its next names no step (a mark that is no number counts as none): each task's newest.
	markStepAndSave(t, worker, "soon", map[string]string{"shard-1": "worker unstepped"})
	if strings.Contains(read(t, worker.Local, SavedFile), `"step"`) {
		t.Fatal("a mark without a number saved a step")
	}
	markStepAndSave(t, chief, "30", map[string]string{"shard-0": "chief at 30"})
	if k, _ := restoreInto(t, st, "chief-0", testSpec(testApp)); read(t, k.Local, "shard-0") != "chief at 30" || read(t, k.Local, "shard-1") != "worker unstepped" {
		t.Fatal("without a step on every newest checkpoint, each task's newest was not restored")
	}

	// Steps again, but none in common (keep 2: the chief has 30 and 40, the worker 35 and 45).
	markStepAndSave(t, worker, "35", map[string]string{"shard-1": "worker at 35"})
	markStepAndSave(t, chief, "40", map[string]string{"shard-0": "chief at 40"})
	markStepAndSave(t, worker, "45", map[string]string{"shard-1": "worker at 45"})
	if k, _ := restoreInto(t, st, "chief-0", testSpec(testApp)); read(t, k.Local, "shard-0") != "chief at 40" || read(t, k.Local, "shard-1") != "worker at 45" {
		t.Fatal("with no step in common, each task's newest was not restored")
	}
}

func TestParseStep(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "42\n": 42, " 7 ": 7} {
		if n, err := parseStep([]byte(in)); err != nil || *n != want {
			t.Errorf("parseStep(%q) = %v, %v", in, n, err)
		}
	}
	for _, in := range []string{"", "-1", "x", "1e3", strings.Repeat("1", 40)} {
		if n, err := parseStep([]byte(in)); err == nil {
			t.Errorf("parseStep(%q) = %d, want an error", in, *n)
		}
	}
}
