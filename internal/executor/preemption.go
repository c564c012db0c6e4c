package executor

import (
	"context"
	"errors"
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

// preemptionFilePath is where the task's program finds a preemption
// warning (contract.EnvPreemptionFile): an absolute path in its working
// directory. A file left there by an earlier run (`run --local` reuses
// the directory) is removed, so that the file appearing means this run
// is warned.
func preemptionFilePath(cfg *Config) (string, error) {
	return freshTaskFile(cfg.Dir, contract.PreemptionFileName(string(cfg.Task.Type), cfg.Task.Index), "preemption warning file")
}

// waitPreemptionFunc is rendezvous.Client.WaitPreemption.
type waitPreemptionFunc func(ctx context.Context, task taskspec.TaskID, containerID string) (rendezvous.PreemptionNotice, error)

// watchPreemption waits, while the program runs, for the AM's warning
// that YARN will preempt this container; then it writes the warning file
// and sends the program's process group preemptionSignal, once. Without
// a container (--local) nothing preempts the task, and an AM that passes
// on no warnings is not asked again.
func watchPreemption(ctx context.Context, cfg *Config, wait waitPreemptionFunc, path string, signal func(syscall.Signal) error, log *logger) {
	if cfg.ContainerID == "" {
		return
	}
	n, err := wait(ctx, cfg.Task, cfg.ContainerID)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, rendezvous.ErrNotServed) {
			log.printf("no longer listening for preemption warnings: %v", err)
		}
		return
	}
	line := contract.NewPreemptionWarning(n.Deadline, n.Reason, cfg.Task.String(), cfg.ContainerID).Line()
	if err := writeWhole(path, line); err != nil {
		log.printf("YARN will preempt this container (%s), but the warning file could not be written: %v", n.Reason, err)
	} else {
		log.printf("YARN will preempt this container from %s on (in %s): %s; wrote %s, sending %s to the program",
			n.Deadline.UTC().Format("15:04:05.000Z"), time.Until(n.Deadline).Round(time.Millisecond), n.Reason, path, contract.PreemptionSignal)
	}
	if ctx.Err() == nil {
		_ = signal(preemptionSignal)
	}
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
