//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// nodesJob prints where it runs (its NodeManager's host, NM_HOST) and its TF_CONFIG, then waits
// for the file named by its first argument (at most 2 minutes).
const nodesJob = `echo "host=$NM_HOST"; echo "tfconfig=$TF_CONFIG"; i=0; while [ ! -e "$0" ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done; echo done`

// clusterHosts is the host of every NodeManager of c, from its ready file.
func clusterHosts(t *testing.T, c *clustertest.Cluster) []string {
	t.Helper()
	var hosts []string
	for i := 0; ; i++ {
		id, ok := c.Facts[fmt.Sprintf("nm%d", i)]
		if !ok {
			break
		}
		host, _, err := net.SplitHostPort(id)
		require.NoError(t, err, id)
		hosts = append(hosts, host)
	}
	sort.Strings(hosts)
	return hosts
}

// On the fault suite's cluster, whose NodeManagers each run as a process on a host of their own like
// every test cluster's (clustertest.RequireFaults: three unlabelled, one gpu-labelled, 32 vcores each), a running job's tasks on every
// one of them: three in the default queue spread over its three nodes, one in ml-gpu on the gpu
// node. `tfyarn logs --task` reads each running task's output from its own NodeManager; TF_CONFIG
// names each task by its node's host, a different one per node; `run` shows the decider's output
// live, with no "cannot show" line.
func TestE2ENodeHosts(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.RequireFaults(t)
	want := clusterHosts(t, c)
	require.Len(t, want, 4, "the fault suite's cluster runs four NodeManagers")
	stop := filepath.Join(clustertest.ContainerDir(t), "stop")
	spread := startTfyarn(t, c, bin, 4*time.Minute, "run", "--name", "e2e-node-hosts", "--worker", "3x1c,128m",
		"--spread", "worker", "--", "sh", "-c", nodesJob, stop)
	gpu := startTfyarn(t, c, bin, 4*time.Minute, "run", "--name", "e2e-node-hosts-gpu", "--queue", "ml-gpu",
		"--worker", "1c,128m", "--", "sh", "-c", nodesJob, stop)
	t.Cleanup(func() { _ = os.WriteFile(stop, nil, 0o644) })
	apps := map[string]*bgTfyarn{}
	for _, r := range []*bgTfyarn{spread, gpu} {
		apps[r.waitStderr(t, regexp.MustCompile(`(application_\d+_\d+) submitted`), time.Minute)[1]] = r
	}
	spreadApp := spread.waitStderr(t, regexp.MustCompile(`(application_\d+_\d+) submitted`), time.Second)[1]

	var got []string
	taskHost := map[string]string{}
	tfConfig := map[string]string{}
	for appID, r := range apps {
		workers := 1
		if r == spread {
			workers = 3
		}
		for i := 0; i < workers; i++ {
			task := fmt.Sprintf("worker:%d", i)
			r.waitStderr(t, regexp.MustCompile(regexp.QuoteMeta(task)+` registered at`), 2*time.Minute)
			var stdout, stderr string
			var code int
			require.Eventually(t, func() bool {
				stdout, stderr, code = execTfyarn(t, c, bin, nil, "logs", appID, "--task", task, "--file", "stdout")
				return code == 0 && strings.Contains(stdout, "tfconfig=")
			}, time.Minute, time.Second, "tfyarn logs %s --task %s of the running task: exit %d\n%s%s", appID, task, code, stdout, stderr)
			require.Contains(t, stdout, "LogAggregationType: LOCAL", "read from the running task's NodeManager")
			host := regexp.MustCompile(`(?m)^host=(\S+)$`).FindStringSubmatch(stdout)
			require.NotNil(t, host, stdout)
			got = append(got, host[1])
			taskHost[appID+" "+task] = host[1]
			tfConfig[appID+" "+task] = regexp.MustCompile(`(?m)^tfconfig=(.*)$`).FindStringSubmatch(stdout)[1]
		}
	}
	sort.Strings(got)
	require.Equal(t, want, got, "one task on every NodeManager, each read from its own")

	// TF_CONFIG names each worker by its node's host.
	var tf struct {
		Cluster map[string][]string `json:"cluster"`
	}
	require.NoError(t, json.Unmarshal([]byte(tfConfig[spreadApp+" worker:0"]), &tf))
	require.Len(t, tf.Cluster["worker"], 3, tfConfig[spreadApp+" worker:0"])
	for i, addr := range tf.Cluster["worker"] {
		host, _, err := net.SplitHostPort(addr)
		require.NoError(t, err, addr)
		require.Equal(t, taskHost[fmt.Sprintf("%s worker:%d", spreadApp, i)], host, "TF_CONFIG's worker %d", i)
	}
	t.Logf("tasks' hosts: %v", taskHost)

	// run shows the decider's (worker:0's) output while it runs.
	for appID, r := range apps {
		line := "[worker:0] host=" + taskHost[appID+" worker:0"] + "\n"
		require.Eventually(t, func() bool { return strings.Contains(r.stdout.String(), line) }, 30*time.Second, 200*time.Millisecond,
			"run of %s shows %q live; stdout: %s\nstderr: %s", appID, line, &r.stdout, &r.stderr)
	}
	require.NoError(t, os.WriteFile(stop, nil, 0o644))
	for appID, r := range apps {
		require.Equal(t, exitOK, r.wait(t, 2*time.Minute), "%s stderr: %s", appID, &r.stderr)
		require.Contains(t, r.stdout.String(), "[worker:0] done\n")
		require.NotContains(t, r.stderr.String()+r.stdout.String(), "cannot show")
	}
}

// A MultiWorkerMirroredStrategy job whose three workers run on three different NodeManagers
// (hosts) of the fault suite's cluster trains and succeeds: the workers find each other by the host
// names TF_CONFIG gives them.
func TestE2ENodesMWMS(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.RequireFaults(t)
	python := tfPython(t, c)
	r, _, code := execTF(t, c, bin, "--name", "e2e-nodes-mwms", "--worker", "3x1c,1g", "--spread", "worker",
		"--python", python, filepath.Join(c.Root, "examples", "mwms_keras.py"), "--", "--epochs", "1", "--steps-per-epoch", "3")
	require.Equal(t, exitOK, code, r.Diagnostics)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	nodes := map[string]bool{}
	for _, task := range r.Tasks {
		require.Equal(t, "worker", task.Type, task.Task)
		nodes[task.Node] = true
	}
	require.Len(t, nodes, 3, "three workers on three nodes: %+v", r.Tasks)
	logs := appLogs(t, c, r.AppID, 4)
	m := regexp.MustCompile(`(?m)^TF_CONFIG=(\{.*"task":\{"type":"worker","index":0\}\})$`).FindStringSubmatch(logs)
	require.NotNil(t, m, "worker:0's TF_CONFIG in its log")
	var tf struct {
		Cluster map[string][]string `json:"cluster"`
	}
	require.NoError(t, json.Unmarshal([]byte(m[1]), &tf))
	hosts := map[string]bool{}
	for _, addr := range tf.Cluster["worker"] {
		host, _, err := net.SplitHostPort(addr)
		require.NoError(t, err, addr)
		hosts[host] = true
		require.NotEqual(t, "localhost", host)
	}
	require.Len(t, hosts, 3, "TF_CONFIG names three hosts: %v", tf.Cluster)
}

// A host whose NodeManager process is killed (cluster.sh nm stop: SIGKILL to it and its
// containers at once) and one whose NodeManager process is frozen (nm freeze: SIGSTOP), each with
// a worker of a running job on it, end as the README's failure table says for a lost NodeManager,
// within the fault suite's bound: a cluster restart on the other nodes, not counted, SUCCEEDED.
// One after the other: each takes a node away.
func TestE2ENodeFaults(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.RequireFaults(t)
	t.Run("killed", func(t *testing.T) {
		r := testFaultNodeManagerLost(t, c, bin)
		t.Logf("%s: %s in %s (recovered in %s)", "nodemanager-killed", r.Outcome, r.End, r.Recovery)
	})
	t.Run("frozen", func(t *testing.T) {
		r := testFaultNodeManagerFrozen(t, c, bin)
		t.Logf("%s: %s in %s (recovered in %s)", "nodemanager-frozen", r.Outcome, r.End, r.Recovery)
	})
}
