package client

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/tfyarn/tfyarn/internal/checkpoint"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// Checkpoint is one complete checkpoint of one task that tfyarn keeps
// (run --checkpoint).
type Checkpoint struct {
	Job  string    // the job's name, or its directory when given one
	Task string    // the task's directory: "worker-1"
	ID   string    // the checkpoint's
	App  string    // the application that saved it
	Time time.Time // when its save began
	Path string    // on HDFS
}

// checkpointsDir is the directory of the job named job: an absolute HDFS
// path names itself, anything else a job under the user's checkpoints.
func (c *Client) checkpointsDir(fs *hdfs.FS, job string) (string, error) {
	if path.IsAbs(job) {
		return job, checkpoint.CheckDir(job)
	}
	if err := checkpoint.CheckJobName(job); err != nil {
		return "", err
	}
	return checkpoint.JobDir(hdfs.CheckpointsDir(fs.User()), job), nil
}

// Checkpoints lists the complete checkpoints of the job named job (a job
// name, or the absolute HDFS directory given to --checkpoint), or of every
// job of the user's when job is "".
func (c *Client) Checkpoints(ctx context.Context, job string) ([]Checkpoint, error) {
	fs, err := c.session.HDFS(ctx)
	if err != nil {
		return nil, err
	}
	jobs := []string{job}
	if job == "" {
		if jobs, err = checkpoint.Jobs(ctx, fs, hdfs.CheckpointsDir(fs.User())); err != nil {
			return nil, err
		}
	}
	var out []Checkpoint
	for _, name := range jobs {
		dir, err := c.checkpointsDir(fs, name)
		if err != nil {
			return nil, err
		}
		cs, err := checkpoint.List(ctx, fs, dir)
		if err != nil {
			return nil, err
		}
		for _, cp := range cs {
			out = append(out, Checkpoint{Job: name, Task: cp.Slot, ID: cp.ID, App: cp.App, Time: cp.Time, Path: path.Join(dir, cp.Slot, cp.ID)})
		}
	}
	return out, nil
}

// DeleteCheckpoints removes the job's checkpoint directory, every task's
// checkpoints with it: the job's next run starts afresh.
func (c *Client) DeleteCheckpoints(ctx context.Context, job string) error {
	if job == "" {
		return fmt.Errorf("name the job whose checkpoints to delete")
	}
	fs, err := c.session.HDFS(ctx)
	if err != nil {
		return err
	}
	dir, err := c.checkpointsDir(fs, job)
	if err != nil {
		return err
	}
	return fs.RemoveAll(ctx, dir)
}
