//go:build e2e

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/jobreport"
)

// The TF1 between-graph example on YARN, TFMesos/Marathon style: the
// cluster reaches the script only through the placeholders {ps_hosts}
// {worker_hosts} {job_name} {task_index} in its arguments.
//
//	go test -tags e2e -run E2ETF1 ./cmd/tfyarn/
func TestE2ETF1(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	t.Run("between-graph", func(t *testing.T) { testTF1BetweenGraph(t, c, bin, tfPython(t, c)) })
}

// Two workers and a ps run examples/tf1_between_graph.py. A script job is
// judged by the chief rule: with no chief, worker 0's exit decides; the ps,
// which serves forever, is stopped once worker 0 is done and the job ends
// SUCCEEDED. Every task got the real addresses in its arguments.
func testTF1BetweenGraph(t *testing.T, c *clustertest.Cluster, bin, python string) {
	// The interpreter is the venv's, behind a wrapper that first prints the
	// arguments it was given, after the launcher's substitution: the
	// example itself prints only its TF_CONFIG.
	wrapper := filepath.Join(clustertest.ContainerDir(t), "python") // the tasks run it
	require.NoError(t, os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\necho \"TF1_ARGV=$*\"\nexec %s \"$@\"\n", python)), 0o755))

	r, _, code := execTF(t, c, bin, "--name", "e2e-tf1", "--worker", "2x1c,1g", "--ps", "1c,1g",
		"--python", wrapper, filepath.Join(c.Root, "examples", "tf1_between_graph.py"), "--",
		"--ps_hosts", "{ps_hosts}", "--worker_hosts", "{worker_hosts}",
		"--job_name", "{job_name}", "--task_index", "{task_index}")
	require.Equal(t, exitOK, code, r.Diagnostics)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	// Worker 0 decided; the ps (and worker 1 if it was still running) was
	// stopped after it.
	require.Regexp(t, `^worker:0 succeeded; stopped (worker:1, )?ps:0 after it$`, r.Diagnostics)

	require.Len(t, r.Tasks, 3)
	tasks := map[string]jobreport.Task{}
	for _, task := range r.Tasks {
		require.NotEmpty(t, task.Host, task.Task)
		require.NotZero(t, task.Port, task.Task)
		require.NotEmpty(t, task.ContainerID, task.Task)
		tasks[task.Task] = task
	}
	addr := func(task string) string {
		return tasks[task].Host + ":" + strconv.Itoa(tasks[task].Port)
	}
	require.Equal(t, "succeeded", tasks["worker:0"].State)
	require.Equal(t, "stopped", tasks["ps:0"].State)

	raw := appLogsWithAMLog(t, c, r.AppID, 4) // the AM's and 3 tasks'
	logs := containerLogs(raw)
	psHosts := addr("ps:0")
	workerHosts := addr("worker:0") + "," + addr("worker:1")
	output := func(task string) string { // the task's stdout and stderr
		l := logs[tasks[task].ContainerID]
		return l["stdout"] + l["stderr"]
	}
	for _, task := range r.Tasks {
		require.Contains(t, logs, task.ContainerID, "the aggregated logs of %s", task.Task)
		// The container was launched with no program at all (the arguments come
		// from the AM, issue 18.4): the launch script holds only the launcher,
		// and the program got the addresses the tasks registered in place of
		// the placeholders.
		launch := logs[task.ContainerID]["launch_container.sh"]
		require.Contains(t, launch, "./tfyarn task", task.Task)
		require.NotContains(t, launch, "--ps_hosts", task.Task)
		out := output(task.Task)
		argv := regexp.MustCompile(`(?m)^TF1_ARGV=(.*)$`).FindStringSubmatch(out)
		require.NotNil(t, argv, "%s printed its arguments:\n%s", task.Task, out)
		require.Regexp(t, `^\S*tf1_between_graph\.py --ps_hosts `+regexp.QuoteMeta(psHosts)+` --worker_hosts `+regexp.QuoteMeta(workerHosts)+
			` --job_name `+task.Type+` --task_index `+strconv.Itoa(task.Index)+`$`, argv[1], task.Task)
		require.NotContains(t, out, "{ps_hosts}", task.Task)
		require.NotContains(t, out, "{worker_hosts}", task.Task)
		// TensorFlow's server took its address from those arguments.
		require.Regexp(t, `Started server with target: grpc://\S+:`+strconv.Itoa(task.Port)+`\b`, out, task.Task)
	}
	require.Contains(t, output("worker:0"), "worker:0: done at global step")
	require.Contains(t, output("ps:0"), "ps:0: serving variables at")
	// The ps, which serves forever, was stopped by the AM, once worker 0
	// was done: the AM's log says so, in that order.
	require.Contains(t, output("ps:0"), "the AM stops this task")
	var am string
	for _, l := range logs {
		am += l["am.stderr"]
	}
	require.NotEmpty(t, am, "the AM's log; the AM's section of the aggregated logs:\n%s", amLogOf(raw))
	workerDone := strings.Index(am, "tfyarn am: worker:0 succeeded in "+tasks["worker:0"].ContainerID)
	psStop := strings.Index(am, "tfyarn am: asking ps:0 in "+tasks["ps:0"].ContainerID+" to end")
	psStopped := strings.Index(am, "tfyarn am: ps:0 stopped in "+tasks["ps:0"].ContainerID)
	require.True(t, workerDone >= 0 && psStop > workerDone && psStopped > psStop,
		"the AM's log: worker:0 succeeded, then ps:0 was asked to end, then it stopped:\n%s", am)
}

// containerLogs splits `yarn logs -applicationId` output by container and
// log file: container id → log type (stdout, stderr, launch_container.sh,
// ...) → its contents.
func containerLogs(out string) map[string]map[string]string {
	header := regexp.MustCompile(`(?m)^Container: (container_\S+) on `)
	logType := regexp.MustCompile(`(?m)^LogType:(\S+)$`)
	bounds := header.FindAllStringSubmatchIndex(out, -1)
	logs := map[string]map[string]string{}
	for i, b := range bounds {
		end := len(out)
		if i+1 < len(bounds) {
			end = bounds[i+1][0]
		}
		id, chunk := out[b[2]:b[3]], out[b[0]:end]
		if logs[id] == nil {
			logs[id] = map[string]string{}
		}
		name := "unknown"
		if m := logType.FindStringSubmatch(chunk); m != nil {
			name = m[1]
		}
		logs[id][name] += chunk
	}
	return logs
}
