package executor

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/tfyarn/tfyarn/internal/checkpoint"
)

// Where a task's checkpoints live in its working directory (run
// --checkpoint): the program's directory, and the copies of marked
// checkpoints being uploaded.
const (
	checkpointDirName     = "tfyarn-checkpoint"
	checkpointScratchName = ".tfyarn-checkpoint-scratch"
)

// checkpointRun is a task's checkpoint keeping while its program runs;
// nil when the job keeps none (its methods then do nothing).
type checkpointRun struct {
	k        *checkpoint.Keeper
	urgent   chan struct{}
	warnOnce sync.Once
	watching chan struct{} // closed when watch returns
}

// restoreCheckpoints restores the task's latest checkpoint into its
// checkpoint directory before the program starts, and adds the
// directory (checkpoint.EnvDir) and what was restored
// (checkpoint.EnvRestored) to env. A restore that fails is logged and the
// program starts without a checkpoint: from part of one would be worse.
func restoreCheckpoints(ctx context.Context, cfg *Config, env []string, log *logger) ([]string, *checkpointRun) {
	k := cfg.Checkpoints
	if k == nil {
		return env, nil
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		dir = cfg.Dir
	}
	if k.Local == "" {
		k.Local = filepath.Join(dir, checkpointDirName)
	}
	if k.Scratch == "" {
		k.Scratch = filepath.Join(dir, checkpointScratchName)
	}
	k.Logf = log.printf
	id, err := k.Restore(ctx)
	if err != nil {
		log.printf("%v; the program starts without a checkpoint", err)
	} else if id == "" {
		log.printf("no checkpoint to restore in %s; the program starts afresh", k.Spec.Dir)
	}
	env = setEnv(env, checkpoint.EnvDir, k.Local, true)
	env = setEnv(env, checkpoint.EnvRestored, id, true)
	return env, &checkpointRun{k: k, urgent: make(chan struct{}), watching: make(chan struct{})}
}

// watch saves the checkpoints the program marks until runCtx ends.
func (c *checkpointRun) watch(runCtx context.Context) {
	if c == nil {
		return
	}
	defer close(c.watching)
	c.k.Watch(runCtx, c.urgent)
}

// warned is the preemption warning: marked checkpoints are then saved
// within milliseconds.
func (c *checkpointRun) warned() {
	if c != nil {
		c.warnOnce.Do(func() { close(c.urgent) })
	}
}

// finish saves at the program's exit (checkpoint.Keeper.Finish), once the
// save under way, if any, is done.
func (c *checkpointRun) finish(ctx context.Context, ok bool, log *logger) {
	if c == nil {
		return
	}
	<-c.watching
	if err := c.k.Finish(ctx, ok); err != nil {
		log.printf("saving the checkpoint at exit: %v", err)
	}
}
