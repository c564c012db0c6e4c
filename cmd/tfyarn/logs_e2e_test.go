//go:build e2e

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/ipc"
)

// bgTfyarn is a tfyarn process running in the background.
type bgTfyarn struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan struct{}
	code           int
}

func startTfyarn(t *testing.T, c *clustertest.Cluster, bin string, limit time.Duration, args ...string) *bgTfyarn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	b := &bgTfyarn{done: make(chan struct{})}
	t.Logf("step: started tfyarn %s (at most %s)", strings.Join(args, " "), limit)
	b.cmd = exec.CommandContext(ctx, bin, args...)
	b.cmd.Env = c.Env()
	b.cmd.Stdout, b.cmd.Stderr = &b.stdout, &b.stderr
	require.NoError(t, b.cmd.Start())
	go func() {
		defer cancel()
		_ = b.cmd.Wait()
		b.code = b.cmd.ProcessState.ExitCode()
		close(b.done)
	}()
	t.Cleanup(func() { cancel(); <-b.done })
	return b
}

// wait waits for the process to end, at most limit.
func (b *bgTfyarn) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-b.done:
		return b.code
	case <-time.After(limit):
		t.Fatalf("tfyarn %s did not end within %s\nstdout: %s\nstderr: %s", strings.Join(b.cmd.Args[1:], " "), limit, &b.stdout, &b.stderr)
		return -1
	}
}

// waitStderr waits for a line of stderr matching re and returns its submatches.
func (b *bgTfyarn) waitStderr(t *testing.T, re *regexp.Regexp, limit time.Duration) []string {
	t.Helper()
	var m []string
	require.Eventually(t, func() bool { m = re.FindStringSubmatch(b.stderr.String()); return m != nil }, limit, 200*time.Millisecond,
		"waited %s for %s on stderr: %s", limit, re, &b.stderr)
	return m
}

// logsJob is what every task of the logs test prints: one line on stderr,
// then ticks on stdout, for about ten seconds.
const logsJob = `echo hello from $TFYARN_TASK; echo err from $TFYARN_TASK >&2; for i in 1 2 3 4 5 6 7 8 9 10; do echo tick $i; sleep 1; done`

// One job (in the gpu-labelled queue: see liveLogsNode) for every logs
// behaviour: run's live output of the decider, tfyarn logs while it runs
// (printed and followed), and once it ended, byte for byte what Hadoop's
// `yarn logs` prints.
//
// liveLogsNode: MiniYARNCluster runs both NodeManagers in one JVM, where
// Guice serves every NodeManager web port from the last NodeManager's
// context (the gpu-labelled one), so a container's live logs are readable
// only there — Hadoop's own `yarn logs` for running applications has the
// same limit on this cluster. Real clusters run one NodeManager per JVM.
func TestE2ELogs(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	run := startTfyarn(t, c, bin, 4*time.Minute, "run", "--name", "e2e-logs", "--queue", "ml-gpu", "--node-label", "gpu",
		"--chief", "1c,256m", "--worker", "1c,256m", "--", "sh", "-c", logsJob)
	// Beside it, --logs all with --output json: every task's lines, all on
	// stderr, stdout holding only the JSON result.
	all := startTfyarn(t, c, bin, 4*time.Minute, "run", "--name", "e2e-logs-all", "--queue", "ml-gpu", "--node-label", "gpu",
		"--worker", "2x1c,256m", "--logs", "all", "--output", "json", "--", "sh", "-c", "sleep 2; echo hi from $TFYARN_TASK; sleep 1")
	appID := run.waitStderr(t, regexp.MustCompile(`(application_\d+_\d+) submitted`), time.Minute)[1]
	workerContainer := run.waitStderr(t, regexp.MustCompile(`worker:0 started in (container_\S+) on`), 2*time.Minute)[1]
	run.waitStderr(t, regexp.MustCompile(`worker:0 registered at`), time.Minute)

	follow := startTfyarn(t, c, bin, 3*time.Minute, "logs", appID, "--follow", "--task", "worker:0")
	// Printed while it runs: the NodeManager's copy, in yarn logs' format.
	require.Eventually(t, func() bool {
		stdout, _, code := execTfyarn(t, c, bin, nil, "logs", appID, "--task", "worker:0", "--file", "stdout")
		return code == 0 && strings.Contains(stdout, "tick 2\n")
	}, time.Minute, time.Second, "tfyarn logs of a running task")
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "logs", appID, "--task", "worker:0", "--file", "stdout", "--tail", "1")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `^Container: `+workerContainer+` on \S+\nLogAggregationType: LOCAL\n=+\nLogType:stdout\n`, stdout)
	require.Regexp(t, `\nLogContents:\ntick \d+\n\nEnd of LogType:stdout\n`, stdout, "--tail 1: one line")
	require.NotContains(t, stdout, "hello from")

	require.Equal(t, exitOK, run.wait(t, 3*time.Minute), "stderr: %s", &run.stderr)
	require.Equal(t, exitOK, follow.wait(t, time.Minute), "follow ends with the application; stderr: %s", &follow.stderr)
	t.Logf("run stdout:\n%s\nrun stderr:\n%s", &run.stdout, &run.stderr)

	// run: the decider's (chief:0's) output live, prefixed; status on stderr.
	runOut, runErr := run.stdout.String(), run.stderr.String()
	require.Contains(t, runOut, "[chief:0] hello from chief:0\n")
	require.Contains(t, runErr, "[chief:0] err from chief:0\n")
	require.Regexp(t, `(?m)^\[chief:0\] tick 10$`, runOut, "the decider's last line is shown before run ends")
	require.NotContains(t, runOut, "worker:0", "only the decider by default")
	require.NotContains(t, runOut, appID, "no progress line on stdout")
	require.Regexp(t, `(?m)^`+appID+` FINISHED SUCCEEDED: chief:0 succeeded`, runErr)
	require.Less(t, strings.Index(runErr, "[chief:0] err from chief:0"), strings.Index(runErr, "chief:0 succeeded"))

	// logs --follow: every line of the task, prefixed, stdout and stderr apart.
	require.Contains(t, follow.stdout.String(), "[worker:0] hello from worker:0\n[worker:0] tick 1\n")
	require.Contains(t, follow.stderr.String(), "[worker:0] err from worker:0\n")
	require.NotContains(t, follow.stdout.String(), "chief:0")

	require.Equal(t, exitOK, all.wait(t, 3*time.Minute), "stderr: %s", &all.stderr)
	require.NotEmpty(t, runJSON(t, all.stdout.String()).AppID)
	require.Contains(t, all.stderr.String(), "[worker:0] hi from worker:0\n")
	require.Contains(t, all.stderr.String(), "[worker:1] hi from worker:1\n")

	// Ended: the aggregated logs, once YARN has aggregated them, equal yarn logs'.
	var mine string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, errOut, code := execTfyarn(t, c, bin, nil, "logs", appID)
		if code == 0 && !strings.Contains(errOut, "still running") {
			mine = out
			break
		}
		require.Regexp(t, `still aggregating|still running`, errOut, "the only reason to wait")
		if code != 0 {
			require.Equal(t, exitUsage, code, "README: while YARN is still aggregating, exit 2: %s", errOut)
		}
		if time.Now().After(deadline) {
			t.Fatalf("logs of %s not aggregated in 2 minutes: %s", appID, errOut)
		}
		time.Sleep(2 * time.Second)
	}
	hadoop := c.Hadoop(t, "yarn", "logs", "-applicationId", appID)
	require.Equal(t, hadoop, mine, "tfyarn logs APP must print what yarn logs -applicationId APP does")
	require.Equal(t, 2, len(regexp.MustCompile(`(?m)^Container: container_\S+ on \S+\nLogAggregationType: AGGREGATED\n=+\nLogType:stdout\n`).FindAllString(mine, -1)), "the chief's and the worker's stdout (the AM's is am.stdout)")

	oneOut, errOut, code := execTfyarn(t, c, bin, nil, "logs", appID, "--task", "worker:0", "--file", "stdout")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, c.Hadoop(t, "yarn", "logs", "-applicationId", appID, "-containerId", workerContainer, "-log_files", "stdout"), oneOut)
	require.Contains(t, oneOut, "hello from worker:0\ntick 1\n")

	// The AM's container is "am" (its launch_container.sh exports no TFYARN_TASK).
	amOut, errOut, code := execTfyarn(t, c, bin, nil, "logs", appID, "--task", "am", "--file", "am.stderr")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 1, strings.Count(amOut, "\nLogType:"), amOut)
	require.Contains(t, amOut, "LogType:am.stderr\n")
	require.Contains(t, amOut, "tfyarn am: ")
	// The AM and the launchers log which tfyarn they are as they start.
	built := builtInfo(t, c, bin).String()
	require.Contains(t, amOut, "tfyarn am: "+built+"\n")
	workerErr, errOut, code := execTfyarn(t, c, bin, nil, "logs", appID, "--task", "worker:0", "--file", "stderr")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, workerErr, "tfyarn task worker:0: "+built+"\n")

	// Bad input: one line, exit 2.
	_, errOut, code = execTfyarn(t, c, bin, nil, "logs", appID, "--task", "boss:1")
	require.Equal(t, exitUsage, code)
	require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	require.Contains(t, errOut, `--task "boss:1"`)
	_, errOut, code = execTfyarn(t, c, bin, nil, "logs", appID, "--task", "ps:3")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "no log files of task ps:3")
}

// On the Kerberized cluster (hadoop.http.authentication.type=simple, log
// aggregation off). Its NodeManagers list a running container's logs but
// cannot read them: in secure mode they open log files through
// SecureIOUtils, which needs Hadoop's native library, absent from the test
// cluster (the reason aggregation is off there too). So tfyarn logs says
// that in one line, run --output json keeps stdout for the JSON and says
// once on stderr, for all its tasks and files, why their output is not
// shown, and an ended application's logs are refused with the reason.
func TestE2ELogsKerberos(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.RequireKerberos(t)
	run := startTfyarn(t, c, bin, 4*time.Minute, "run", "--name", "e2e-krb-logs", "--queue", "ml-gpu", "--node-label", "gpu",
		"--worker", "2x1c,256m", "--logs", "all", "--output", "json", "--", "sh", "-c", logsJob)
	appID := run.waitStderr(t, regexp.MustCompile(`(application_\d+_\d+) submitted`), time.Minute)[1]
	run.waitStderr(t, regexp.MustCompile(`worker:0 registered at`), 2*time.Minute)
	_, stderr, code := execTfyarn(t, c, bin, nil, "logs", appID, "--task", "worker:0", "--file", "stdout")
	require.Equal(t, exitUsage, code, stderr)
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	require.Contains(t, stderr, "the NodeManager cannot read container logs in secure mode without Hadoop's native library")

	require.Equal(t, exitOK, run.wait(t, 3*time.Minute), "stderr: %s", &run.stderr)
	r := runJSON(t, run.stdout.String())
	require.Equal(t, appID, r.AppID)
	require.Equal(t, 1, strings.Count(run.stderr.String(), "cannot show the tasks' output live ("), "said once for the run: %s", &run.stderr)
	require.Regexp(t, appID+`: cannot show the tasks' output live \([1-4] files? of [12] tasks? so far: worker:\d.*\): the NodeManager cannot read container logs in secure mode without Hadoop's native library; their logs will be in the application's aggregated logs once it ends`, run.stderr.String())
	require.NotContains(t, run.stderr.String(), "cannot read worker:", "not once per task and file")
	require.NotContains(t, run.stderr.String(), "never served", "the NodeManager answered")

	_, stderr, code = execTfyarn(t, c, bin, nil, "logs", appID)
	require.Equal(t, exitUsage, code)
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	require.Contains(t, stderr, "log aggregation is disabled on this cluster")
}

// The other formats Hadoop writes, as Hadoop's own writers wrote them
// (internal/tasklogs/aggregated/testdata: IFile uncompressed and gz, TFile gz),
// put on HDFS where a NodeManager would, for applications the
// ResourceManager does not know (as after its restart): tfyarn logs reads
// them from HDFS directly and prints what yarn logs prints. The IFile
// ones are read through a configuration that lists IFile first, as a
// cluster writing IFile has.
func TestE2ELogsFormats(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	user := ipc.DefaultUser()
	ifConf := copyConfDir(t, c.ConfDir, func(data []byte) []byte {
		data = bytes.Replace(data, []byte("<name>yarn.log-aggregation.file-formats</name><value>TFile</value>"),
			[]byte("<name>yarn.log-aggregation.file-formats</name><value>IFile,TFile</value>"), 1)
		require.Contains(t, string(data), "IFile,TFile")
		extra := ""
		for k, v := range map[string]string{
			"yarn.log-aggregation.file-controller.IFile.class": "org.apache.hadoop.yarn.logaggregation.filecontroller.ifile.LogAggregationIndexedFileController",
			"yarn.log-aggregation.file-controller.TFile.class": "org.apache.hadoop.yarn.logaggregation.filecontroller.tfile.LogAggregationTFileController",
			// Hadoop refuses two formats sharing one directory.
			"yarn.log-aggregation.IFile.remote-app-log-dir": "/tmp/e2e-ilogs",
		} {
			extra += "<property><name>" + k + "</name><value>" + v + "</value></property>"
		}
		return bytes.Replace(data, []byte("</configuration>"), []byte(extra+"</configuration>"), 1)
	})
	testdata := filepath.Join(c.Root, "internal", "tasklogs", "aggregated", "testdata")
	for _, tc := range []struct {
		fixture, dir, node, conf string
	}{
		{"ifile-none", "/tmp/e2e-ilogs/" + user + "/bucket-logs-ifile/9998/application_1_9998", "node-b_4321", ifConf},
		{"ifile-gz", "/tmp/e2e-ilogs/" + user + "/bucket-logs-ifile/9997/application_1_9997", "node-b_4321", ifConf},
		{"tfile-gz", "/tmp/logs/" + user + "/bucket-logs-tfile/9999/application_1_9999", "node-a_1234", c.ConfDir},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			appID := filepath.Base(tc.dir)
			c.Hadoop(t, "hdfs", "dfs", "-mkdir", "-p", tc.dir)
			c.Hadoop(t, "hdfs", "dfs", "-put", "-f", filepath.Join(testdata, tc.fixture), tc.dir+"/"+tc.node)
			want := hadoopWithConf(t, c, tc.conf, "yarn", "logs", "-applicationId", appID, "-appOwner", user)
			stdout, stderr, code := execTfyarn(t, c, bin, nil, "--conf-dir", tc.conf, "logs", appID)
			require.Equal(t, 0, code, stderr)
			require.Equal(t, want, stdout)
			require.Contains(t, stdout, "LogType:stdout\n")
			require.Contains(t, stderr, "the ResourceManager does not know "+appID)
		})
	}
	// Unknown to the RM and nothing on HDFS: the RM's answer.
	_, stderr, code := execTfyarn(t, c, bin, nil, "logs", "application_1_9996")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "application_1_9996 not found")
}

// hadoopWithConf runs one of Hadoop's CLIs with another client configuration.
func hadoopWithConf(t *testing.T, c *clustertest.Cluster, conf string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.Root, "testcluster", "hadoop.sh"), args...)
	cmd.Env = c.Env("HADOOP_CONF_DIR=" + conf)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	require.NoError(t, cmd.Run(), "hadoop.sh %v: %s", args, &e)
	return o.String()
}
