package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
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
			"history (its AM's record: job, tensorboard_url and tasks with container, node, exit_code,\n" +
			"restarts, times, gpus, progress, and cpu_percent, rss_bytes, peak_rss_bytes, near_memory_limit)\nor history_error; for a running one, live (the same, from its AM).\n" +
			"When a tfyarn application ends, its AM writes that record to HDFS\n(/user/<user>/.tfyarn/history/<app>.json); status of an ended application prints its task table,\nof a running one the live table from its ApplicationMaster.",
		Flags:        []cli.Flag{outputFlag()},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			idText, id, err := oneAppID(c)
			if err != nil {
				return err
			}
			out, err := outputFormat(c)
			if err != nil {
				return err
			}
			return e.withRM(c.Context, e.timeout, func(ctx context.Context, rm *yarn.ApplicationClient, _ *hadoopconf.Config) error {
				r, err := rm.GetApplicationReport(ctx, id)
				if err != nil {
					return &appError{id: idText, err: err}
				}
				v := statusView{appView: newAppView(r)}
				tasks := v.History
				if yarn.IsTerminal(r.GetYarnApplicationState()) {
					v.History, v.HistoryError = e.readHistory(ctx, v.User, v.ID)
					tasks = v.History
				} else if live, err := e.liveStatus(ctx, r); err == nil && live.AppID == v.ID {
					v.Live, tasks = live, live
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

// oneAppID demands exactly one positional argument, an application id, and
// returns it as typed and parsed.
func oneAppID(c *cli.Context) (string, *hadoopyarn.ApplicationIdProto, error) {
	args, err := positional(c)
	if err != nil {
		return "", nil, err
	}
	if len(args) != 1 {
		return "", nil, usagef("%s needs exactly one application id (%s); see 'tfyarn %s --help'",
			c.Command.Name, yarn.ApplicationIDForm, c.Command.Name)
	}
	id, err := yarn.ParseApplicationID(args[0])
	if err != nil {
		return "", nil, err
	}
	return args[0], id, nil
}

// liveStatus reads a running application's task table from its AM, with
// the status key from the owner's staging directory: another user's
// status shows the ResourceManager's report only.
func (e *env) liveStatus(ctx context.Context, r *hadoopyarn.ApplicationReportProto) (*contract.StatusReport, error) {
	var key []byte
	err := e.withHDFS(ctx, func(fs *hdfs.FS) (err error) {
		key, err = client.ReadStatusKey(ctx, fs, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return client.LiveStatus(ctx, r, key)
}
