package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/buildinfo"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/tfyarn/tfyarn/jobreport"
	"github.com/urfave/cli/v2"
)

func statusCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show one application's state, queue, tracking URL and diagnostics",
		ArgsUsage: "APP_ID",
		UsageText: "tfyarn status APP_ID [--output json]\n\n" +
			"   tfyarn status application_1700000000000_0001\n" +
			"   tfyarn status application_1700000000000_0001 --output json | jq -r .state",
		Description: "JSON keys: id, name, type, user, queue, priority, state, final_status, progress, tracking_url,\nstart_time(_ms), finish_time(_ms), diagnostics, tags; for an ended tfyarn application also\n" +
			"history (its AM's record: job, tensorboard_url, tfyarn_version and tasks with container, node, exit_code,\n" +
			"restarts, times, gpus, progress, and cpu_percent, rss_bytes, peak_rss_bytes, near_memory_limit)\nor history_error; for a running one, live (the same, from its AM).\n" +
			"When a tfyarn application ends, its AM writes that record to HDFS\n(/user/<user>/.tfyarn/history/<app>.json); status of an ended application prints its task table,\nof a running one the live table from its ApplicationMaster.",
		Flags:        []cli.Flag{outputFlag()},
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
			return e.withClient(c.Context, e.timeout, func(ctx context.Context, cl *client.Client) error {
				st, err := cl.Status(ctx, id)
				if err != nil {
					return err
				}
				v := statusView{appView: newAppView(st.Application), History: st.History, Live: st.Live, HistoryError: st.HistoryError}
				tasks := v.History
				if v.Live != nil {
					tasks = v.Live
					warnOtherVersion(e.stderr, v.Live, buildinfo.Current().Label())
				}
				if out == outputJSON {
					return cliout.JSON(e.stdout, v)
				}
				var kv cliout.KeyValues
				kv.Add("Application-Id", v.ID)
				kv.Add("Name", v.Name)
				kv.Add("Type", v.Type)
				kv.Add("User", v.User)
				kv.Add("Queue", v.Queue)
				kv.Add("Priority", strconv.Itoa(int(v.Priority)))
				kv.Add("State", v.State)
				kv.Add("Final-State", v.FinalStatus)
				kv.Add("Progress", percent(v.Progress))
				kv.Add("Tracking-URL", cliout.Cell(v.TrackingURL))
				kv.Add("Start-Time", orDash(v.StartTime))
				kv.Add("Finish-Time", orDash(v.FinishTime))
				kv.Add("Diagnostics", cliout.Cell(v.Diagnostics))
				if tasks != nil {
					addJobKeys(&kv, tasks)
				}
				if _, err = kv.WriteTo(e.stdout); err != nil || tasks == nil {
					if v.HistoryError != "" {
						fmt.Fprintf(e.stderr, "tfyarn: no task table: %s\n", v.HistoryError)
					}
					return err
				}
				fmt.Fprintln(e.stdout)
				_, err = taskTable(tasks).WriteTo(e.stdout)
				return err
			})
		},
	}
}

// oneAppID demands exactly one positional argument, a well-formed
// application id, and returns it.
func oneAppID(c *cli.Context) (string, error) {
	args, err := positional(c)
	if err != nil {
		return "", err
	}
	if len(args) != 1 {
		return "", usagef("%s needs exactly one application id (%s); see 'tfyarn %s --help'",
			c.Command.Name, client.ApplicationIDForm, c.Command.Name)
	}
	if err := client.CheckApplicationID(args[0]); err != nil {
		return "", err
	}
	return args[0], nil
}

// warnOtherVersion says in one line on stderr when the running job's AM is
// another tfyarn than this client (clientLabel).
func warnOtherVersion(stderr io.Writer, live *jobreport.Report, clientLabel string) {
	if m := buildinfo.Mismatch(live.TfyarnVersion, clientLabel); m != "" {
		fmt.Fprintf(stderr, "tfyarn: %s\n", m)
	}
}
