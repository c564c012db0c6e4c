package transcript

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Job is the job a transcript's "new" command describes, the same for
// every driver that replays it: a group per task type given as type=count
// (chief=1 worker=2), max-restarts=N, retry=CODE,CODE,
// start-after=TYPE=TYPE[,TYPE=TYPE] (--start-after) and
// infra-restarts=off (--no-infra-restarts), min-workers=N (an elastic
// PyTorch job), framework=NAME (--framework, a script job). Groups have a
// small nominal shape.
func Job(c Cmd) (taskspec.Job, error) {
	job := taskspec.Job{Command: "true"}
	for _, typ := range taskspec.TaskTypes() {
		if n := c.Get(string(typ), ""); n != "" {
			count, err := strconv.Atoi(n)
			if err != nil {
				return job, fmt.Errorf("%s: %s=%s: %w", c.Pos, typ, n, err)
			}
			job.Tasks = append(job.Tasks, taskspec.TaskGroup{Type: typ, Instances: count, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 256}})
		}
	}
	if n := c.Get("max-restarts", ""); n != "" {
		max, err := strconv.Atoi(n)
		if err != nil {
			return job, fmt.Errorf("%s: max-restarts=%s: %w", c.Pos, n, err)
		}
		job.Restarts.Max = max
	}
	switch v := c.Get("infra-restarts", "on"); v {
	case "on":
	case "off":
		job.Restarts.NoInfraRestarts = true
	default:
		return job, fmt.Errorf("%s: infra-restarts=%s: give on or off", c.Pos, v)
	}
	if n := c.Get("min-workers", ""); n != "" {
		// An elastic PyTorch job (success.Elastic): its framework's rule is
		// every worker's success, over the ones that remain.
		min, err := strconv.Atoi(n)
		if err != nil {
			return job, fmt.Errorf("%s: min-workers=%s: %w", c.Pos, n, err)
		}
		job.Framework, job.Script, job.MinWorkers = "pytorch", "train.py", min
	}
	if name := c.Get("framework", ""); name != "" {
		job.Framework, job.Script = name, "train.py"
	}
	if order := c.Get("start-after", ""); order != "" {
		o, err := taskspec.ParseStartAfter(order)
		if err != nil {
			return job, fmt.Errorf("%s: %w", c.Pos, err)
		}
		job.StartAfter = o
	}
	if n := c.Get("max-node-failures", ""); n != "" {
		max, err := strconv.Atoi(n)
		if err != nil {
			return job, fmt.Errorf("%s: max-node-failures=%s: %w", c.Pos, n, err)
		}
		job.MaxNodeFailures = max
	}
	if f := c.Get("oom-grow", ""); f != "" {
		factor, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return job, fmt.Errorf("%s: oom-grow=%s: %w", c.Pos, f, err)
		}
		job.OOMGrow = factor
	}
	if d := c.Get("gpu-idle", ""); d != "" {
		timeout, err := time.ParseDuration(d)
		if err != nil {
			return job, fmt.Errorf("%s: gpu-idle=%s: %w", c.Pos, d, err)
		}
		job.GPUIdle = taskspec.GPUIdle{Timeout: timeout, Warn: c.Get("gpu-idle-action", "fail") == "warn"}
	}
	if hosts := c.Get("exclude-nodes", ""); hosts != "" {
		job.ExcludeNodes = strings.Split(hosts, ",")
	}
	if codes := c.Get("retry", ""); codes != "" {
		for _, code := range strings.Split(codes, ",") {
			n, err := strconv.Atoi(code)
			if err != nil {
				return job, fmt.Errorf("%s: retry=%s: %w", c.Pos, codes, err)
			}
			job.Restarts.RetryExitCodes = append(job.Restarts.RetryExitCodes, n)
		}
	}
	return job, nil
}
