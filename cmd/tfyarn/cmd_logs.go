package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/urfave/cli/v2"
)

func logsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "print an application's task logs: live from the NodeManagers while it runs, from HDFS once it ended",
		ArgsUsage: "APP_ID",
		UsageText: "tfyarn logs APP_ID [--task TASK] [--file NAME]... [--tail N] [--follow]\n\n" +
			"   tfyarn logs application_1700000000000_0001\n" +
			"   tfyarn logs application_1700000000000_0001 --task worker:1 --file stderr --tail 50\n" +
			"   tfyarn logs application_1700000000000_0001 --follow",
		Description: "While the application runs, the logs come from the NodeManagers' web services (the\n" +
			"containers the ApplicationMaster's status page names); once it ended, from the aggregated\n" +
			"files on HDFS (TFile or IFile, compressed or not), read without Hadoop's jars, also for an\n" +
			"application the ResourceManager no longer knows. Both are printed as Hadoop's\n" +
			"`yarn logs -applicationId` prints them (for an ended application, byte for byte).\n" +
			"--task TASK (worker:1, chief:0; am once ended) keeps that task's container (once ended, every\n" +
			"attempt's), --file NAME (repeatable: stdout, stderr, launch_container.sh, ...) those files,\n" +
			"--tail N each file's last N lines. --follow prints a running application's new lines as they\n" +
			"come until it ends, each prefixed with its task like run --local does, [worker:1]: stdout lines\n" +
			"on stdout, the other files' (stderr) on stderr; it follows stdout and stderr unless --file says\n" +
			"otherwise.\n" +
			"Exit codes: 0 printed, 2 no such application, or logs not (yet) available: while YARN is\n" +
			"still aggregating them (try again), or when log aggregation is disabled on the cluster.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "only this `TASK`'s containers: worker:1, chief:0, ps:0, evaluator:0 or am"},
			&cli.StringSliceFlag{Name: "file", Usage: "only log files named `NAME` (repeatable, comma list): stdout, stderr, ..."},
			&cli.IntFlag{Name: "tail", Usage: "only the last `N` lines of each file"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "print new lines as they come until the application ends"},
		},
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return logsAction(c, e) },
	}
}

func logsAction(c *cli.Context, e *env) error {
	idText, err := oneAppID(c)
	if err != nil {
		return err
	}
	req := client.LogsRequest{Task: c.String("task"), Tail: c.Int("tail"), Follow: c.Bool("follow"),
		Notes:        func(s string) { fmt.Fprintln(e.stderr, s) },
		FollowOutput: client.PrefixedOutput(e.stdout, e.stderr)}
	for _, f := range c.StringSlice("file") {
		if f = strings.TrimSpace(f); f != "" {
			if strings.ContainsAny(f, "/\\") {
				return usagef("--file %q: give a log file's name, e.g. stdout or stderr", f)
			}
			req.Files = append(req.Files, f)
		}
	}
	if req.Tail < 0 {
		return usagef("--tail %d: give a number of lines, at least 1", req.Tail)
	}
	if req.Task != "" && req.Task != "am" {
		if _, err := taskspec.ParseTaskID(req.Task); err != nil {
			return usagef("--task %q: expected a task like worker:1 or chief:0, or am", req.Task)
		}
	}
	return e.withClient(c.Context, 0, func(ctx context.Context, cl *client.Client) error {
		err := cl.Logs(ctx, idText, req, e.stdout)
		var ue *client.LogsUnavailableError
		if errors.As(err, &ue) {
			return &exitCodeError{code: exitUsage, err: err}
		}
		return err
	})
}
