package main

import (
	"context"
	"fmt"
	"os"

	"github.com/tfyarn/tfyarn/internal/buildinfo"
	"github.com/tfyarn/tfyarn/internal/checkpoint"
	"github.com/tfyarn/tfyarn/internal/executor"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/urfave/cli/v2"
)

// taskCommand is the launcher of one task, run by YARN in each task
// container (`./tfyarn task`, see appmaster's TaskLaunchContext): the
// program comes from the AM with the cluster spec; `-- COMMAND ARGS...`
// runs that instead. Hidden: users never type it. It exits with the
// program's exit code (128+N when signal N killed it).
func taskCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:            "task",
		Usage:           "run one task's program (started by the ApplicationMaster)",
		ArgsUsage:       "[-- COMMAND [ARGS...]]",
		Hidden:          true,
		SkipFlagParsing: true, // everything is the user's command
		Action: func(c *cli.Context) error {
			argv := c.Args().Slice()
			if len(argv) > 0 && argv[0] == "--" {
				argv = argv[1:]
				if len(argv) == 0 {
					return usagef("task needs a command after --")
				}
			}
			cfg, err := executor.ConfigFromEnv(argv)
			if err != nil {
				return &exitCodeError{code: executor.ExitBadConfig, err: err}
			}
			cfg.Stdout, cfg.Stderr = e.stdout, e.stderr
			keeper, closeStore, err := taskCheckpoints(c.Context, &cfg)
			if err != nil {
				return &exitCodeError{code: executor.ExitLauncherFailed, err: err}
			}
			defer closeStore()
			cfg.Checkpoints = keeper
			// In YARN's container only: run --local's launchers are this
			// process's own binary, already known.
			fmt.Fprintf(e.stderr, "tfyarn task %s: %s\n", cfg.Task, buildinfo.Current())
			code, err := executor.Run(c.Context, cfg)
			if code == 0 && err == nil {
				return nil
			}
			return &exitCodeError{code: code, err: err}
		},
	}
}

// taskCheckpoints is the task's checkpoint keeper when the job keeps
// checkpoints (run --checkpoint: the AM sets checkpoint.EnvStore), with
// its HDFS connection: made here, since the launcher itself never links
// HDFS. Nil without; a job that keeps checkpoints where they cannot be
// kept fails the task rather than train without them.
func taskCheckpoints(ctx context.Context, cfg *executor.Config) (*checkpoint.Keeper, func(), error) {
	v := os.Getenv(checkpoint.EnvStore)
	if v == "" {
		return nil, func() {}, nil
	}
	spec, err := checkpoint.ParseSpec(v)
	if err != nil {
		return nil, nil, fmt.Errorf("task launcher: %w", err)
	}
	conf := hadoopconf.New(nil)
	for k, v := range spec.Conf {
		conf.Set(k, v)
	}
	store := &freshTokenStore{
		connect: func(ctx context.Context, tokens []security.Token) (storeConn, error) {
			fs, err := hdfs.ConnectOptions(ctx, conf, hdfs.Options{User: spec.User, Tokens: tokens})
			if err != nil {
				return nil, fmt.Errorf("task launcher: the checkpoints' HDFS: %w", err)
			}
			return fs, nil
		},
		logf: func(format string, args ...any) {
			fmt.Fprintf(cfg.Stderr, "tfyarn task %s: %s\n", cfg.Task, fmt.Sprintf(format, args...))
		},
	}
	if cfg.Credentials != nil {
		// On a Kerberized cluster the container's HDFS delegation tokens
		// are the task's only way in; a keytab job's AM hands out fresh
		// ones before these end (executor.Config.OnFreshCredentials).
		store.tokens = hdfsTokens(cfg.Credentials)
		cfg.OnFreshCredentials = store.refresh
	}
	_, done, err := store.use(ctx) // connect now: a store that cannot be reached fails the task at once
	if err != nil {
		return nil, nil, err
	}
	done()
	k := &checkpoint.Keeper{Store: store, Spec: spec, Slot: checkpoint.Slot(cfg.Task)}
	return k, store.close, nil
}
