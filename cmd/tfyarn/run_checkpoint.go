package main

import (
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/urfave/cli/v2"
)

// optionalDir is --checkpoint[=DIR]: a flag alone (as a bool's) or with a
// value after '='.
type optionalDir struct {
	set bool
	dir string
}

func (o *optionalDir) Set(v string) error {
	switch v {
	case "true":
		o.set, o.dir = true, ""
	case "false":
		o.set, o.dir = false, ""
	default:
		o.set, o.dir = true, v
	}
	return nil
}

func (o *optionalDir) String() string {
	if o == nil || !o.set {
		return ""
	}
	return o.dir
}

// IsBoolFlag lets --checkpoint stand alone; a directory follows '='.
func (o *optionalDir) IsBoolFlag() bool { return true }

func checkpointFlags() []cli.Flag {
	return []cli.Flag{
		&cli.GenericFlag{Name: "checkpoint", Value: &optionalDir{}, Usage: "keep the tasks' checkpoints on HDFS (`[=DIR]`, default /user/<you>/.tfyarn/checkpoints/<--name>): each task writes them to $TFYARN_CHECKPOINT_DIR, gets the latest back at every start, also a new job's of the same name (see docs/checkpoints.md)"},
		&cli.IntFlag{Name: "checkpoint-keep", Usage: "with --checkpoint, how many checkpoints of each task to keep (default 2)"},
		&cli.BoolFlag{Name: "checkpoint-fresh", Usage: "with --checkpoint, start from no checkpoint: an earlier job's of the same name are ignored (and kept until this one's replace them)"},
	}
}

// applyCheckpoint is --checkpoint, --checkpoint-keep and --checkpoint-fresh.
func applyCheckpoint(c *cli.Context, job *client.Job) error {
	o, _ := c.Generic("checkpoint").(*optionalDir)
	if o == nil || !o.set {
		for _, name := range []string{"checkpoint-keep", "checkpoint-fresh"} {
			if c.IsSet(name) {
				return usagef("--%s: give --checkpoint too", name)
			}
		}
		return nil
	}
	job.Checkpoint = &taskspec.Checkpoint{Dir: o.dir, Keep: c.Int("checkpoint-keep"), Fresh: c.Bool("checkpoint-fresh")}
	if c.IsSet("checkpoint-keep") && job.Checkpoint.Keep < 1 {
		return usagef("--checkpoint-keep %d: give 1 to %d", job.Checkpoint.Keep, taskspec.MaxCheckpointKeep)
	}
	return nil
}
