package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/urfave/cli/v2"
)

// The ResourceManager's names of the resources an application's
// resource-seconds are reported for.
const (
	resourceGPU    = "yarn.io/gpu"
	resourceVCores = "vcores"
	resourceMemory = "memory-mb"
)

func reportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "GPU-, vcore- and memory-hours of applications, from the ResourceManager and tfyarn's history",
		UsageText: "tfyarn report [--user U] [--queue Q] [--since 7d] [--output table|json|csv]\n\n" +
			"   tfyarn report --since 30d\n" +
			"   tfyarn report --user all --queue ml-gpu --output csv",
		Description: "Per application and in total: GPU-hours allocated (the ResourceManager's resource-seconds\n" +
			"for yarn.io/gpu), GPU-hours used (tfyarn's GPU samples, from the job's history), vcore- and\n" +
			"memory-hours, the wait in the queue, preempted resource-seconds and restarts.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "user", Usage: "whose applications: yours by default, a user's, or all"},
			&cli.StringSliceFlag{Name: "queue", Aliases: []string{"q"}, Usage: "only applications in this queue (repeatable)"},
			&cli.StringFlag{Name: "since", Value: "7d", Usage: "only applications started this long ago or later: a duration, or days as 7d"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: outputTable, Usage: "table, json or csv"},
		},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("report takes no arguments; see 'tfyarn report --help'")
			}
			out := c.String("output")
			if out != outputTable && out != outputJSON && out != "csv" {
				return usagef("--output %q: expected table, json or csv", out)
			}
			since, err := parseSince(c.String("since"))
			if err != nil {
				return err
			}
			user := c.String("user")
			opts := client.ListOptions{States: []string{"ALL"}, AllUsers: user != "", Queues: c.StringSlice("queue")}
			return e.withClient(c.Context, e.timeout, func(ctx context.Context, cl *client.Client) error {
				apps, err := cl.List(ctx, opts)
				if err != nil {
					return err
				}
				rep := usageReport{Since: time.Now().Add(-since).UTC()}
				for _, a := range apps {
					if (user != "" && user != "all" && a.User != user) || a.StartTime.Before(rep.Since) {
						continue
					}
					rep.add(appUsageOf(ctx, cl, a))
				}
				return rep.write(e, out)
			})
		},
	}
}

// parseSince is --since: a Go duration, or whole days ("7d").
func parseSince(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, usagef("--since %q: give a duration such as 12h, or days such as 7d", s)
}

// appUsage is one application's line of the report.
type appUsage struct {
	AppID string `json:"app_id"`
	Name  string `json:"name"`
	User  string `json:"user"`
	Queue string `json:"queue"`
	State string `json:"state"`
	// GPUHours is what the ResourceManager allocated (yarn.io/gpu
	// resource-seconds / 3600); GPUHoursUsed what tfyarn's GPU samples
	// say was used (nil without a history that says).
	GPUHours     float64  `json:"gpu_hours"`
	GPUHoursUsed *float64 `json:"gpu_hours_used"`
	VCoreHours   float64  `json:"vcore_hours"`
	MemoryGBH    float64  `json:"memory_gb_hours"`
	// QueueWaitSeconds is from submission to the AM's launch (nil before).
	QueueWaitSeconds *float64 `json:"queue_wait_seconds"`
	// PreemptedResourceSeconds are the RM's, per resource type.
	PreemptedResourceSeconds map[string]int64 `json:"preempted_resource_seconds,omitempty"`
	// ResourceSeconds are the RM's, per resource type, as it reported them.
	ResourceSeconds map[string]int64 `json:"resource_seconds,omitempty"`
	Restarts        *int             `json:"restarts"`
}

// appUsageOf is a's line: the RM's accounting, and its history's when it
// ended and has one.
func appUsageOf(ctx context.Context, cl *client.Client, a client.Application) appUsage {
	u := appUsage{AppID: a.ID, Name: a.Name, User: a.User, Queue: a.Queue, State: a.State,
		GPUHours:        float64(a.ResourceSeconds[resourceGPU]) / 3600,
		VCoreHours:      float64(a.ResourceSeconds[resourceVCores]) / 3600,
		MemoryGBH:       float64(a.ResourceSeconds[resourceMemory]) / 1024 / 3600,
		ResourceSeconds: a.ResourceSeconds, PreemptedResourceSeconds: a.PreemptedResourceSeconds}
	submitted := a.SubmitTime
	if submitted.IsZero() {
		submitted = a.StartTime // the RM's start time is its submission's; some RMs leave submit_time 0
	}
	if !a.LaunchTime.IsZero() && !submitted.IsZero() {
		w := a.LaunchTime.Sub(submitted).Seconds()
		u.QueueWaitSeconds = &w
	}
	if !a.Ended() {
		return u
	}
	if st, err := cl.Status(ctx, a.ID); err == nil && st.History != nil {
		used := st.History.GPUSecondsUsed / 3600
		u.GPUHoursUsed, u.Restarts = &used, &st.History.Restarts
	}
	return u
}

// usageReport is the report: the applications' lines and their sum.
type usageReport struct {
	Since        time.Time  `json:"since"`
	Applications []appUsage `json:"applications"`
	Total        appUsage   `json:"total"`
}

func (r *usageReport) add(u appUsage) {
	r.Applications = append(r.Applications, u)
	t := &r.Total
	t.AppID = "total"
	t.GPUHours += u.GPUHours
	t.VCoreHours += u.VCoreHours
	t.MemoryGBH += u.MemoryGBH
	if u.GPUHoursUsed != nil {
		t.GPUHoursUsed = ptr(deref(t.GPUHoursUsed) + *u.GPUHoursUsed)
	}
	if u.Restarts != nil {
		t.Restarts = ptr(deref(t.Restarts) + *u.Restarts)
	}
	for k, v := range u.PreemptedResourceSeconds {
		if t.PreemptedResourceSeconds == nil {
			t.PreemptedResourceSeconds = map[string]int64{}
		}
		t.PreemptedResourceSeconds[k] += v
	}
}

func ptr[T any](v T) *T { return &v }

func deref[T int | float64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// write prints the report as a table, JSON or CSV.
func (r *usageReport) write(e *env, out string) error {
	if out == outputJSON {
		if r.Applications == nil {
			r.Applications = []appUsage{}
		}
		return cliout.JSON(e.stdout, r)
	}
	header := []string{"APPLICATION-ID", "USER", "QUEUE", "STATE", "GPU-HOURS", "GPU-HOURS-USED", "VCORE-HOURS", "MEMORY-GB-HOURS", "QUEUE-WAIT", "PREEMPTED", "RESTARTS"}
	rows := [][]string{}
	for _, u := range append(r.Applications, r.Total) {
		rows = append(rows, u.cells())
	}
	if out == "csv" {
		w := csv.NewWriter(e.stdout)
		_ = w.Write(header)
		_ = w.WriteAll(rows)
		return w.Error()
	}
	t := cliout.NewTable(header...)
	for _, row := range rows {
		cells := make([]any, len(row))
		for i, c := range row {
			cells[i] = c
		}
		t.Row(cells...)
	}
	_, err := t.WriteTo(e.stdout)
	return err
}

// cells are u's columns in the table and CSV.
func (u appUsage) cells() []string {
	hours := func(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }
	used, wait, restarts := "-", "-", "-"
	if u.GPUHoursUsed != nil {
		used = hours(*u.GPUHoursUsed)
	}
	if u.QueueWaitSeconds != nil {
		wait = (time.Duration(*u.QueueWaitSeconds * float64(time.Second))).Round(time.Second).String()
	}
	if u.Restarts != nil {
		restarts = strconv.Itoa(*u.Restarts)
	}
	var preempted []string
	for _, k := range []string{resourceGPU, resourceVCores, resourceMemory} {
		if v := u.PreemptedResourceSeconds[k]; v > 0 {
			preempted = append(preempted, fmt.Sprintf("%s=%d", k, v))
		}
	}
	return []string{u.AppID, u.User, u.Queue, u.State, hours(u.GPUHours), used, hours(u.VCoreHours), hours(u.MemoryGBH), wait, orDashText(strings.Join(preempted, " ")), restarts}
}

func orDashText(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
