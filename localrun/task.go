package localrun

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/contract"
	"github.com/tfyarn/tfyarn/executor"
	"github.com/tfyarn/tfyarn/taskspec"
)

// task is one task of the local job: an in-process launcher whose program
// is a child process.
type task struct {
	id             taskspec.TaskID
	cancel         context.CancelFunc
	stdout, stderr *prefixWriter
	stopAsked      bool
	state          TaskState
}

// ended is what a task's launcher goroutine hands back.
type ended struct {
	task *task
	code int
	err  error
}

// argv is the program every task runs: Command, or Script under the
// configured Python, followed by Args (placeholders are the executor's).
func argv(job taskspec.Job, opts Options) ([]string, error) {
	switch {
	case job.Script != "" && job.Command != "":
		return nil, fmt.Errorf("localrun: the job has both a command (%q) and a script (%q); give one", job.Command, job.Script)
	case job.Script != "":
		return append([]string{opts.Python, job.Script}, job.Args...), nil
	case job.Command != "":
		return append([]string{job.Command}, job.Args...), nil
	}
	return nil, fmt.Errorf("localrun: the job has no command and no script")
}

// taskEnv is the base environment plus the job's variables and the task's
// identity; the executor adds TF_CONFIG and the port.
func taskEnv(base []string, job taskspec.Job, appID string, id taskspec.TaskID) []string {
	env := append([]string(nil), base...)
	keys := make([]string, 0, len(job.Env))
	for k := range job.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	set := func(k, v string) {
		prefix := k + "="
		out := env[:0]
		for _, kv := range env {
			if !strings.HasPrefix(kv, prefix) {
				out = append(out, kv)
			}
		}
		env = append(out, prefix+v)
	}
	for _, k := range keys {
		set(k, job.Env[k])
	}
	set(contract.EnvTask, id.String())
	set(contract.EnvTaskType, string(id.Type))
	set(contract.EnvTaskIndex, strconv.Itoa(id.Index))
	set(contract.EnvTaskAttempt, "0")
	set(contract.EnvAppID, appID)
	return env
}

// start runs t's launcher in a goroutine; its end arrives on ends.
func (t *task) start(ctx context.Context, cfg executor.Config, ends chan<- ended) {
	ctx, t.cancel = context.WithCancel(ctx)
	cfg.Task = t.id
	cfg.Stdout, cfg.Stderr = t.stdout, t.stderr
	// The launchers share this process: none may subscribe to SIGINT or
	// SIGTERM itself, or one Ctrl-C would go to a single task. The
	// caller's context carries the interrupt to all of them instead.
	cfg.Signals = make(chan os.Signal)
	go func() {
		code, err := executor.Run(ctx, cfg)
		t.stdout.Flush()
		t.stderr.Flush()
		ends <- ended{task: t, code: code, err: err}
	}()
}
