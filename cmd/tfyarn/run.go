package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/urfave/cli/v2"
)

// taskFlags are the task-type flags of run, in job order.
var taskFlags = []taskspec.TaskType{taskspec.Chief, taskspec.Worker, taskspec.PS, taskspec.Evaluator}

func runCommand(e *env) *cli.Command {
	flags := []cli.Flag{}
	for _, t := range taskFlags {
		flags = append(flags, &cli.StringFlag{Name: string(t), Usage: "`SPEC` of the " + string(t) + " tasks"})
	}
	flags = append(flags,
		&cli.StringFlag{Name: "queue", Aliases: []string{"q"}, Value: client.DefaultQueue, Usage: "YARN queue"},
		&cli.StringFlag{Name: "name", Value: "tfyarn", Usage: "application name"},
		&cli.GenericFlag{Name: "tag", Value: &multiValue{}, Usage: "application tag (repeatable)"},
		&cli.StringFlag{Name: "am-memory", Value: strconv.Itoa(client.DefaultAMMemoryMiB) + "m", Usage: "ApplicationMaster memory, e.g. 256m or 1g"},
		&cli.IntFlag{Name: "am-vcores", Value: client.DefaultAMVCores, Usage: "ApplicationMaster vcores"},
		&cli.GenericFlag{Name: "setenv", Value: &multiValue{}, Usage: "`KEY=VALUE` in every task's environment (repeatable)"},
		outputFlag(),
	)
	return &cli.Command{
		Name:      "run",
		Usage:     "run a command in YARN containers and wait for it",
		ArgsUsage: "-- COMMAND [ARGS...]",
		UsageText: "tfyarn run --worker SPEC [--chief SPEC] [--ps SPEC] [--evaluator SPEC] [options] -- COMMAND [ARGS...]\n\n" +
			"   tfyarn run --worker 3x1c,256m -- sh -c 'echo hello from $TFYARN_TASK'\n" +
			"   tfyarn run --worker 2x2c,1g --queue ml-gpu --output json -- ./train.sh",
		Description: taskspec.SpecHelp + "\n\n" +
			"Every task runs COMMAND with TFYARN_TASK (e.g. worker:1), TFYARN_TASK_TYPE, TFYARN_TASK_INDEX\n" +
			"and TFYARN_APP_ID set. The job succeeds when every task exits 0 and fails as soon as one fails.\n" +
			"Exit codes: 0 succeeded, 1 failed or killed, 2 usage, validation or cluster error.\n" +
			"JSON (--output json): {app_id, final_status, state, diagnostics, tracking_url, uploaded_bytes, tasks}.",
		Flags:        flags,
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return runAction(c, e) },
	}
}

func runAction(c *cli.Context, e *env) error {
	out, err := outputFormat(c)
	if err != nil {
		return err
	}
	job, err := runJob(c)
	if err != nil {
		return err
	}
	conf, err := e.loadConf()
	if err != nil {
		return err
	}
	job.Conf = conf
	job.CallTimeout = e.timeout
	progress := e.stdout
	if out == outputJSON {
		progress = e.stderr // stdout holds one JSON document
	}
	s, err := client.Submit(c.Context, job)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(progress, "%s submitted (uploaded %d bytes)\n", s.AppID, s.UploadedBytes)
	res, err := s.Wait(c.Context, func(ev client.Event) {
		if ev.StateChanged {
			fmt.Fprintf(progress, "%s %s\n", ev.AppID, ev.State)
		}
		if ev.TrackingURLChanged || ev.StateChanged && ev.State == "RUNNING" && ev.TrackingURL != "" {
			fmt.Fprintf(progress, "%s tracking URL: %s\n", ev.AppID, ev.TrackingURL)
		}
	})
	if res != nil {
		if out == outputJSON {
			if jerr := cliout.JSON(e.stdout, res); jerr != nil {
				return jerr
			}
		} else {
			fmt.Fprintf(progress, "%s %s %s: %s\n", res.AppID, res.State, res.FinalStatus, res.Diagnostics)
		}
	}
	if errors.Is(err, context.Canceled) && res != nil && res.State == "KILLED" {
		return &client.JobError{Result: res}
	}
	return err
}

// runJob turns the flags and arguments into a job, validating the specs
// before anything touches the cluster.
func runJob(c *cli.Context) (client.Job, error) {
	argv := c.Args().Slice()
	if len(argv) == 0 {
		return client.Job{}, usagef("run needs a command after --, e.g. tfyarn run --worker 1c -- sh -c 'exit 0'; see 'tfyarn run --help'")
	}
	job := client.Job{Job: taskspec.Job{
		Name:    c.String("name"),
		Queue:   c.String("queue"),
		Command: argv[0],
		Args:    argv[1:],
	}}
	for _, t := range taskFlags {
		if !c.IsSet(string(t)) {
			continue
		}
		g, err := taskspec.ParseSpec(t, c.String(string(t)))
		if err != nil {
			return client.Job{}, err
		}
		job.Tasks = append(job.Tasks, g)
	}
	for _, kv := range c.Generic("setenv").(*multiValue).values {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return client.Job{}, usagef("--setenv %q: expected KEY=VALUE", kv)
		}
		if job.Env == nil {
			job.Env = map[string]string{}
		}
		job.Env[k] = v
	}
	job.Tags = c.Generic("tag").(*multiValue).values
	mem, err := parseMiB(c.String("am-memory"))
	if err != nil {
		return client.Job{}, usagef("--am-memory %q: %v", c.String("am-memory"), err)
	}
	job.AMMemoryMiB = mem
	if v := c.Int("am-vcores"); v < 1 {
		return client.Job{}, usagef("--am-vcores %d: give at least 1", v)
	} else {
		job.AMVCores = int32(v)
	}
	if err := job.Validate(taskspec.ClusterLimits{}); err != nil {
		return client.Job{}, err
	}
	return job, nil
}

// parseMiB reads 256, 256m or 1g (MiB, MiB, GiB).
func parseMiB(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "g"):
		mult, s = 1024, strings.TrimSuffix(s, "g")
	case strings.HasSuffix(s, "m"):
		s = strings.TrimSuffix(s, "m")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > 1<<40 {
		return 0, errors.New("expected a size like 256m or 1g")
	}
	return n * mult, nil
}

// multiValue is a repeatable string flag that, unlike StringSliceFlag, does
// not split on commas: KEY=a,b is one value.
type multiValue struct{ values []string }

func (m *multiValue) Set(v string) error { m.values = append(m.values, v); return nil }
func (m *multiValue) String() string     { return strings.Join(m.values, " ") }
