package submit

import (
	"context"
	"fmt"

	"github.com/tfyarn/tfyarn/internal/checkpoint"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/taskspec"
)

// checkCheckpoint refuses, before anything is created, a --checkpoint the
// job cannot have: a directory that is no absolute HDFS path, a job name
// that cannot name one.
func checkCheckpoint(job Job) error {
	c := job.Checkpoint
	if c == nil {
		return nil
	}
	if c.Dir != "" {
		if err := checkpoint.CheckDir(c.Dir); err != nil {
			return &taskspec.ValidationError{Message: "--checkpoint: " + err.Error()}
		}
		return nil
	}
	if err := checkpoint.CheckJobName(job.Name); err != nil {
		return &taskspec.ValidationError{Message: "--checkpoint: " + err.Error()}
	}
	return nil
}

// prepareCheckpoints fills in the job's checkpoint directory (the user's
// own by job name when none was given) and the number kept, and makes the
// directory, private (0700). A directory another user owns is refused.
func (s *Submission) prepareCheckpoints(ctx context.Context) error {
	c := s.job.Checkpoint
	if c == nil {
		return nil
	}
	resolved := *c
	if resolved.Dir == "" {
		resolved.Dir = checkpoint.JobDir(hdfs.CheckpointsDir(s.FS.User()), s.job.Name)
	}
	if resolved.Keep == 0 {
		resolved.Keep = checkpoint.DefaultKeep
	}
	if err := s.FS.MakePrivateDir(ctx, resolved.Dir); err != nil {
		return &taskspec.ValidationError{Message: fmt.Sprintf("--checkpoint %s: %v", resolved.Dir, err)}
	}
	s.job.Checkpoint = &resolved
	return nil
}
