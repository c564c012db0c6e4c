package main

import (
	"context"
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/client"
	"github.com/urfave/cli/v2"
)

const defaultKillWait = 30 * time.Second

func killCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "kill",
		Usage:     "kill an application and wait until YARN reports it ended",
		ArgsUsage: "APP_ID",
		UsageText: "tfyarn kill APP_ID [--wait 30s]\n\n" +
			"   tfyarn kill application_1700000000000_0001",
		Description: "Prints the final state (KILLED). An application that had already ended is left alone:\n" +
			"kill says so (\"APP_ID already ended FINISHED/SUCCEEDED; nothing to kill\") and exits 0, since\n" +
			"what was asked (the application is not running) holds. Exits 0 once the application has ended,\n" +
			"2 if it has not within --wait or is unknown.",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "wait", Value: defaultKillWait, Usage: "how long to wait for the application to end"},
		},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			id, err := oneAppID(c)
			if err != nil {
				return err
			}
			// --timeout bounds each RM exchange (the kill itself); --wait the
			// whole thing, since the RM takes a moment to stop the containers.
			limit := max(c.Duration("wait"), e.timeout)
			return e.withClient(c.Context, limit, func(ctx context.Context, cl *client.Client) error {
				if a, err := cl.Application(ctx, id); err == nil && a.Ended() {
					fmt.Fprintf(e.stdout, "%s already ended %s/%s; nothing to kill\n", id, a.State, a.FinalStatus)
					return nil
				}
				user, err := cl.User()
				if err != nil {
					return err
				}
				a, err := cl.Kill(ctx, id, "killed by "+user+" with tfyarn kill")
				if err != nil {
					if a != nil && ctx.Err() != nil {
						return fmt.Errorf("%s was still %s after %s; it may end later (tfyarn status %s)",
							id, a.State, c.Duration("wait"), id)
					}
					return err
				}
				fmt.Fprintf(e.stdout, "%s %s\n", id, a.State)
				return nil
			})
		},
	}
}
