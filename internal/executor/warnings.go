package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// preemptionSignal is contract.PreemptionSignal.
const preemptionSignal = syscall.SIGWINCH

// warningFiles are where the task's program finds the AM's warnings: the
// preemption warning file (contract.EnvPreemptionFile), for a preemption
// only, and the warnings file (contract.EnvWarningsFile), a line for every
// warning. Both are absolute paths in its working directory. Files left
// there by an earlier run (`run --local` reuses the directory) are
// removed, so that a file appearing means this run is warned.
type warningFiles struct {
	preemption, all string
	lines           int // appended to all so far
}

func newWarningFiles(cfg *Config) (*warningFiles, error) {
	preemption, err := freshTaskFile(cfg.Dir, contract.PreemptionFileName(string(cfg.Task.Type), cfg.Task.Index), "preemption warning file")
	if err != nil {
		return nil, err
	}
	all, err := freshTaskFile(cfg.Dir, contract.WarningsFileName(string(cfg.Task.Type), cfg.Task.Index), "warnings file")
	if err != nil {
		return nil, err
	}
	return &warningFiles{preemption: preemption, all: all}, nil
}

// waitNoticeFunc is rendezvous.Client.WaitNotice.
type waitNoticeFunc func(ctx context.Context, task taskspec.TaskID, containerID string, after uint64) (rendezvous.Notice, error)

// watchWarnings takes, while the program runs, the AM's warnings for this
// container one after another, and passes each to the program: a
// preemption through both files and preemptionSignal to its process
// group, idle GPUs through the warnings file alone (the signal and the
// preemption file mean "checkpoint now" to the programs that handle them).
// Without a container (--local) nothing warns the task, and an AM that
// passes on no warnings is not asked again.
func watchWarnings(ctx context.Context, cfg *Config, wait waitNoticeFunc, files *warningFiles, signal func(syscall.Signal) error, log *logger) {
	if cfg.ContainerID == "" {
		return
	}
	var after uint64
	for {
		n, err := wait(ctx, cfg.Task, cfg.ContainerID, after)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, rendezvous.ErrNotServed) {
				log.printf("no longer listening for warnings: %v", err)
			}
			return
		}
		after = n.Seq
		w := contract.NewWarning(n.Kind, time.Now(), n.Deadline, n.Reason, cfg.Task.String(), cfg.ContainerID)
		if n.Kind == contract.WarningPreemption {
			files.preempted(ctx, cfg, n, w, signal, log)
			continue
		}
		if err := files.add(w); err != nil {
			log.printf("warning (%s): %s, but the warnings file could not take it: %v", n.Kind, n.Reason, err)
		} else {
			log.printf("warning (%s): %s; appended to %s", n.Kind, n.Reason, files.all)
		}
	}
}

// preempted writes the preemption warning file and the warnings file's
// line, then signals the program.
func (f *warningFiles) preempted(ctx context.Context, cfg *Config, n rendezvous.Notice, w contract.Warning, signal func(syscall.Signal) error, log *logger) {
	line := contract.NewPreemptionWarning(n.Deadline, n.Reason, cfg.Task.String(), cfg.ContainerID).Line()
	err := writeWhole(f.preemption, line)
	if err == nil {
		err = f.add(w)
	}
	if err != nil {
		log.printf("YARN will preempt this container (%s), but the warning could not be written: %v", n.Reason, err)
	} else {
		log.printf("YARN will preempt this container from %s on (in %s): %s; wrote %s, sending %s to the program",
			n.Deadline.UTC().Format("15:04:05.000Z"), time.Until(n.Deadline).Round(time.Millisecond), n.Reason, f.preemption, contract.PreemptionSignal)
	}
	if ctx.Err() == nil {
		_ = signal(preemptionSignal)
	}
}

// add appends w's line to the warnings file with one write, so that a
// reader sees the line whole or not yet. The file is created 0600; one
// the program put there is appended to only when it is a regular file (a
// FIFO must not block the launcher, a symbolic link is not followed).
// After contract.MaxWarningLines lines it takes no more.
func (f *warningFiles) add(w contract.Warning) error {
	if f.lines >= contract.MaxWarningLines {
		return fmt.Errorf("it holds %d lines already, the most a launcher writes", f.lines)
	}
	file, err := os.OpenFile(f.all, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return err
	}
	defer file.Close()
	if st, err := file.Stat(); err != nil {
		return err
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is no regular file", f.all)
	}
	if _, err := file.Write(w.Line()); err != nil {
		return err
	}
	f.lines++
	return file.Close()
}

// writeWhole puts data at path through a file beside it and a rename, so
// a program watching for path never reads part of it. No fsync: the
// warning is worth nothing after a crash, and every millisecond counts
// before the kill.
func writeWhole(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
