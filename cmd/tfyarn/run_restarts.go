package main

import (
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/urfave/cli/v2"
)

// applyRestarts is --max-restarts, --retry-exit-codes and
// --no-infra-restarts; taskspec's validation checks the numbers themselves.
func applyRestarts(c *cli.Context, job *client.Job) error {
	if err := applyNodes(c, job); err != nil {
		return err
	}
	job.Restarts.Max = c.Int("max-restarts")
	job.Restarts.NoInfraRestarts = c.Bool("no-infra-restarts")
	codes := strings.TrimSpace(c.String("retry-exit-codes"))
	if codes == "" {
		return nil
	}
	if job.Restarts.Max == 0 {
		return usagef("--retry-exit-codes %s: give --max-restarts N too (without it a program's failure is never restarted)", codes)
	}
	for _, f := range strings.Split(codes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return usagef("--retry-exit-codes %s: %q is not an exit code; give numbers separated by commas, e.g. 137,143", codes, f)
		}
		job.Restarts.RetryExitCodes = append(job.Restarts.RetryExitCodes, n)
	}
	return nil
}

// applyNodes is --max-node-failures and --exclude-nodes; taskspec's
// validation checks the host names.
func applyNodes(c *cli.Context, job *client.Job) error {
	switch n := c.Int("max-node-failures"); {
	case n < 0:
		return usagef("--max-node-failures %d is negative; give 0 (never exclude a node) or more", n)
	case n == 0:
		job.MaxNodeFailures = taskspec.NoNodeExclusion
	default:
		job.MaxNodeFailures = n
	}
	job.FailOnLog, job.ExcludeNodeOnLog = c.String("fail-on-log"), c.String("exclude-node-on-log")
	if c.IsSet("gpu-idle-timeout") {
		job.GPUIdle.Timeout = c.Duration("gpu-idle-timeout")
		switch a := c.String("gpu-idle-action"); a {
		case "fail", "warn":
			job.GPUIdle.Warn = a == "warn"
		default:
			return usagef("--gpu-idle-action %q: give fail or warn", a)
		}
	}
	if c.IsSet("gpu-idle-action") && !c.IsSet("gpu-idle-timeout") {
		return usagef("--gpu-idle-action %s: give --gpu-idle-timeout too", c.String("gpu-idle-action"))
	}
	if c.IsSet("gpu-idle-threshold") {
		job.GPUIdle.Threshold = c.Float64("gpu-idle-threshold")
	}
	job.OOMGrow = c.Float64("oom-grow")
	if c.IsSet("oom-grow") && job.Restarts.Max == 0 && c.Int("max-restarts") == 0 {
		return usagef("--oom-grow %g: give --max-restarts N too (a memory kill restarts only as a counted restart)", job.OOMGrow)
	}
	for _, h := range strings.Split(c.String("exclude-nodes"), ",") {
		if h = strings.TrimSpace(h); h != "" {
			job.ExcludeNodes = append(job.ExcludeNodes, h)
		}
	}
	return nil
}
