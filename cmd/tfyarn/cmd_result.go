package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/urfave/cli/v2"
)

// taskName is worker:0, ps:1, chief:0, ...
var taskName = regexp.MustCompile(`^[a-z][a-z0-9_]*:(0|[1-9][0-9]{0,5})$`)

func resultCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "result",
		Usage:     "write a task's result (what its program wrote to $TFYARN_RESULT_FILE) to a file or stdout",
		ArgsUsage: "APP_ID",
		UsageText: "tfyarn result APP_ID (--task TASK [--out FILE] | --output json | --delete)\n\n" +
			"   tfyarn result application_1700000000000_0001 --task worker:0 --out model-metrics.json",
		Description: "Every task's program finds in TFYARN_RESULT_FILE a path in its working directory. What it writes\n" +
			"there (at most 64 MiB) its launcher saves when the program exits, whatever its exit code, on HDFS\n" +
			"in /user/<user>/.tfyarn/results/<app>/ (0700, yours alone). A larger file is not saved: run says so.\n" +
			"Results stay until tfyarn result --delete, or tfyarn cache clean once 7 days old.\n" +
			"--output json lists the tasks that saved a result: [{\"task\": \"worker:0\", \"bytes\": 123}].\n" +
			"Exit codes: 0 written, 1 the task saved no result, 2 usage or cluster error.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "the `TASK` whose result to write (worker:0)"},
			&cli.StringFlag{Name: "out", Usage: "write the result to `FILE` (replaced whole) rather than stdout"},
			&cli.BoolFlag{Name: "delete", Usage: "remove the application's saved results"},
			outputFlag(),
		},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			id, err := oneAppID(c)
			if err != nil {
				return err
			}
			out, err := outputFormat(c)
			if err != nil {
				return err
			}
			task := c.String("task")
			switch {
			case c.Bool("delete") && (task != "" || c.IsSet("out") || c.IsSet("output")):
				return usagef("result --delete takes no --task, --out or --output")
			case c.Bool("delete"), out == outputJSON:
			case task == "":
				return usagef("result needs --task TASK (worker:0), or --output json to list the tasks that saved one")
			case !taskName.MatchString(task):
				return usagef("--task %q: expected a task like worker:0", task)
			}
			return e.withClient(c.Context, e.timeout, func(ctx context.Context, cl *client.Client) error {
				switch {
				case c.Bool("delete"):
					return cl.DeleteResults(ctx, id)
				case out == outputJSON && task == "":
					list, err := cl.Results(ctx, id)
					if err != nil {
						return err
					}
					return cliout.JSON(e.stdout, list)
				}
				return writeResult(ctx, e, cl, id, task, c.String("out"))
			})
		},
	}
}

// writeResult writes the task's result to path (replaced whole, through a temporary file beside
// it; 0600: a result is the user's),
// or to stdout for "".
func writeResult(ctx context.Context, e *env, cl *client.Client, id, task, path string) error {
	noResult := func(err error) error {
		if errors.Is(err, client.ErrNoResult) {
			return &exitCodeError{code: exitJobFailed, err: fmt.Errorf("%s of %s saved no result", task, id)}
		}
		return err
	}
	if path == "" {
		_, err := cl.TaskResult(ctx, id, task, e.stdout)
		return noResult(err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tfyarn-result-*")
	if err != nil {
		return usagef("--out %s: %v", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = cl.TaskResult(ctx, id, task, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return noResult(err)
	}
	return os.Rename(tmp.Name(), path) // CreateTemp made it 0600
}
