package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
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
			opts := client.ListOptions{States: states, AllUsers: c.Bool("all-users"), Queues: c.StringSlice("queue"), Types: c.StringSlice("type")}
			return e.withClient(c.Context, e.timeout, func(ctx context.Context, cl *client.Client) error {
				apps, err := cl.List(ctx, opts)
				if err != nil {
					return err
				}
				views := make([]appView, 0, len(apps))
				for _, a := range apps {
					views = append(views, newAppView(a))
				}
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

// parseStates checks --state values before anything is asked of the
// cluster: none means the active states, ALL (or all) every state.
func parseStates(names []string) ([]string, error) {
	known := map[string]bool{}
	for _, s := range client.ApplicationStates() {
		known[s] = true
	}
	for _, n := range names {
		if n == "ALL" || n == "all" {
			return []string{"ALL"}, nil
		}
		if !known[strings.ToUpper(strings.TrimSpace(n))] {
			return nil, usagef("--state %q: expected one of %v or ALL", n, client.ApplicationStates())
		}
	}
	return names, nil
}

func percent(p float64) string { return fmt.Sprintf("%.0f%%", 100*p) }
