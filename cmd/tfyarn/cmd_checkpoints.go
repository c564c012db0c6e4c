package main

import (
	"context"
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/urfave/cli/v2"
)

func checkpointsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "checkpoints",
		Usage: "list or delete the checkpoints tfyarn keeps for your jobs (run --checkpoint)",
		UsageText: "tfyarn checkpoints [NAME|DIR] [--output table|json]\n   tfyarn checkpoints NAME|DIR --delete\n\n" +
			"   tfyarn checkpoints\n" +
			"   tfyarn checkpoints mnist --output json\n" +
			"   tfyarn checkpoints mnist --delete",
		Description: "NAME is a job's --name (its checkpoints are in /user/<you>/.tfyarn/checkpoints/NAME); DIR the absolute HDFS directory given to --checkpoint=DIR.\n" +
			"JSON: {\"checkpoints\": [{\"job\", \"task\", \"id\", \"app\", \"time\", \"path\"} ...]}.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "delete", Usage: "remove the job's checkpoints, every task's: its next run starts afresh"},
			outputFlag(),
		},
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return checkpointsAction(c, e) },
	}
}

// checkpointView is one checkpoint as --output json prints it.
type checkpointView struct {
	Job  string    `json:"job"`
	Task string    `json:"task"`
	ID   string    `json:"id"`
	App  string    `json:"app"`
	Time time.Time `json:"time"`
	Path string    `json:"path"`
}

func checkpointsAction(c *cli.Context, e *env) error {
	args, err := positional(c)
	if err != nil {
		return err
	}
	if len(args) > 1 {
		return usagef("checkpoints takes at most one job name, got %d; see 'tfyarn checkpoints --help'", len(args))
	}
	out, err := outputFormat(c)
	if err != nil {
		return err
	}
	name := ""
	if len(args) == 1 {
		name = args[0]
	}
	if c.Bool("delete") && name == "" {
		return usagef("--delete: name the job whose checkpoints to delete, e.g. tfyarn checkpoints mnist --delete")
	}
	return e.withClient(c.Context, e.timeout, func(ctx context.Context, cl *client.Client) error {
		if c.Bool("delete") {
			if err := cl.DeleteCheckpoints(ctx, name); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "deleted the checkpoints of %s\n", name)
			return nil
		}
		cps, err := cl.Checkpoints(ctx, name)
		if err != nil {
			return err
		}
		views := make([]checkpointView, 0, len(cps))
		for _, cp := range cps {
			views = append(views, checkpointView(cp))
		}
		if out == outputJSON {
			return cliout.JSON(e.stdout, struct {
				Checkpoints []checkpointView `json:"checkpoints"`
			}{views})
		}
		t := cliout.NewTable("JOB", "TASK", "SAVED", "APPLICATION", "PATH")
		for _, v := range views {
			t.Row(v.Job, v.Task, v.Time.Format(time.RFC3339), v.App, v.Path)
		}
		_, err = t.WriteTo(e.stdout)
		return err
	})
}
