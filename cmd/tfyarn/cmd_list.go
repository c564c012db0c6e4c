package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/urfave/cli/v2"
)

func listCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list applications (by default your own active ones)",
		UsageText: "tfyarn list [--state S]... [--all-users] [--queue Q] [--type T] [--output table|json]\n\n" +
			"   tfyarn list\n" +
			"   tfyarn list --state FINISHED --state FAILED --all-users --queue ml-gpu\n" +
			"   tfyarn list --output json | jq -r '.applications[].id'",
		Description: "States: NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED, or ALL.\n" +
			"Without --state the active ones (NEW through RUNNING) are listed.\n" +
			"JSON: {\"applications\": [ <same object as 'tfyarn status --output json'> ... ]}.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "state", Aliases: []string{"s"}, Usage: "application state to list (repeatable, or comma-separated)"},
			&cli.BoolFlag{Name: "all-users", Aliases: []string{"A"}, Usage: "list every user's applications, not only yours"},
			&cli.StringSliceFlag{Name: "queue", Aliases: []string{"q"}, Usage: "only applications in this queue (repeatable)"},
			&cli.StringSliceFlag{Name: "type", Usage: "only applications of this type, e.g. TENSORFLOW (repeatable)"},
			outputFlag(),
		},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			out, err := outputNoArgs(c, "list")
			if err != nil {
				return err
			}
			states, err := parseStates(c.StringSlice("state"))
			if err != nil {
				return err
			}
			return e.withRM(c.Context, e.timeout, func(ctx context.Context, rm *yarn.ApplicationClient, _ *hadoopconf.Config) error {
				f := yarn.ApplicationFilter{States: states, Queues: c.StringSlice("queue"), Types: c.StringSlice("type")}
				if !c.Bool("all-users") {
					f.Users = []string{rm.User()}
				}
				apps, err := rm.GetApplications(ctx, f)
				if err != nil {
					return err
				}
				views := make([]appView, 0, len(apps))
				for _, a := range apps {
					views = append(views, newAppView(a))
				}
				sortApps(views)
				if out == outputJSON {
					return cliout.JSON(e.stdout, struct {
						Applications []appView `json:"applications"`
					}{views})
				}
				t := cliout.NewTable("APPLICATION-ID", "NAME", "TYPE", "USER", "QUEUE", "PRIORITY", "STATE", "FINAL-STATUS", "PROGRESS", "TRACKING-URL")
				for _, v := range views {
					t.Row(v.ID, v.Name, v.Type, v.User, v.Queue, strconv.Itoa(int(v.Priority)), v.State, v.FinalStatus, percent(v.Progress), v.TrackingURL)
				}
				_, err = t.WriteTo(e.stdout)
				return err
			})
		},
	}
}

// parseStates maps --state values; none means the active states, ALL means no filter.
func parseStates(names []string) ([]hadoopyarn.YarnApplicationStateProto, error) {
	if len(names) == 0 {
		return yarn.ActiveAppStates, nil
	}
	var out []hadoopyarn.YarnApplicationStateProto
	for _, n := range names {
		if n == "ALL" || n == "all" {
			return nil, nil
		}
		s, err := yarn.ParseAppState(n)
		if err != nil {
			return nil, usagef("--state %q: expected one of %v or ALL", n, yarn.AppStateNames())
		}
		out = append(out, s)
	}
	return out, nil
}

func percent(p float64) string { return fmt.Sprintf("%.0f%%", 100*p) }
