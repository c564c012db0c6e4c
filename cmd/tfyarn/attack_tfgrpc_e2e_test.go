//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/executor"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
)

// tfServer is alice's program: the TensorFlow gRPC server of its task, from
// TF_CONFIG, the way a ParameterServerStrategy worker or ps runs one. It
// ends when the file named by its argument appears.
const tfServer = `import json, os, sys, time
import tensorflow as tf
tc = json.loads(os.environ["TF_CONFIG"])
server = tf.distribute.Server(tf.train.ClusterSpec(tc["cluster"]), job_name=tc["task"]["type"],
                              task_index=tc["task"]["index"], protocol="grpc", start=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.2)
os._exit(0)
`

// tfReader is bob: TensorFlow with no credentials of any kind, connecting
// to the gRPC address argv[1] as job argv[2] task 0 and printing, in
// base64, each file argv[3:] names as that task reads it. It first waits up to
// 60 s for the port to accept (alice's task registers before its program
// has imported TensorFlow).
const tfReader = `import base64, socket, sys, time
import tensorflow as tf
addr, job, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
host, port = addr.rsplit(":", 1)
deadline = time.time() + 60
while True:
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
        break
    except OSError:
        if time.time() > deadline:
            sys.exit("no TensorFlow server at %s within 60s" % addr)
        time.sleep(0.5)
tf.config.experimental_connect_to_cluster(tf.train.ClusterSpec({job: [addr]}), job_name="bob")
for path in paths:
    with tf.device("/job:%s/replica:0/task:0" % job):
        data = tf.io.read_file(path)
    print(base64.b64encode(data.numpy()).decode(), flush=True)
`

// TestE2EAttackTensorFlowGRPC (issue 18.7): TensorFlow's own gRPC server in
// alice's task accepts anyone who reaches its port. bob, a separate process
// holding no Hadoop user, token or key, connects to the address alice's
// status names and has the task read files for him: its Hadoop token file,
// byte for byte, and its /proc/self/environ, which holds alice's
// --secret-env value. What tfyarn keeps out of the token file stays out of
// bob's hands: the rendezvous secret, the status key, the keytab,
// --secret-env values and the AMRMToken. tfyarn cannot authenticate
// TensorFlow's gRPC; this test keeps the README's statement of that true.
//
//	go test -tags e2e -run '^TestE2EAttackTensorFlowGRPC$' ./cmd/tfyarn/
func TestE2EAttackTensorFlowGRPC(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	python := tfPython(t, c)
	dir := clustertest.ContainerDir(t) // the task waits for its release file
	server, reader := filepath.Join(dir, "server.py"), filepath.Join(dir, "reader.py")
	require.NoError(t, os.WriteFile(server, []byte(tfServer), 0o644))
	require.NoError(t, os.WriteFile(reader, []byte(tfReader), 0o644))
	release := filepath.Join(dir, "release")
	secretEnv := "alice-secret-env-" + randomHex(t)
	t.Setenv("TFYARN_TFGRPC_SECRET", secretEnv)
	name := "e2e-attack-tfgrpc-" + randomHex(t)
	run := startHeldRun(t, c, 3*time.Minute, release, bin, "run", "--name", name, "--worker", "1c,1g",
		"--secret-env", "TFYARN_TFGRPC_SECRET", "--output", "json", "--python", python, server, "--", release)
	appID := waitForRunning(t, c, bin, name)
	t.Cleanup(func() { execTfyarn(t, c, bin, nil, "kill", appID) }) // a no-op once it ended

	// The task's address, from alice's status.
	var host, containerID string
	var port int
	deadline := time.Now().Add(time.Minute)
	for port == 0 {
		require.True(t, time.Now().Before(deadline), "worker:0 registered within 1m: %s", run.stderr.String())
		time.Sleep(500 * time.Millisecond)
		out, errOut, code := execTfyarn(t, c, bin, nil, "status", appID, "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		var v statusView
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		if v.Live != nil && len(v.Live.Tasks) == 1 && v.Live.Tasks[0].Port != 0 {
			host, port, containerID = v.Live.Tasks[0].Host, v.Live.Tasks[0].Port, v.Live.Tasks[0].ContainerID
		}
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	t.Logf("worker:0's TensorFlow server at %s", addr)

	// bob, with an empty environment: no HADOOP_USER_NAME, no token file.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, reader, addr, "worker", executor.TokenFileName, "/proc/self/environ")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "TF_CPP_MIN_LOG_LEVEL=2"}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	require.NoError(t, cmd.Run(), "bob's reader: %s", e.String())
	var read [][]byte
	for _, line := range strings.Fields(o.String()) {
		b, err := base64.StdEncoding.DecodeString(line)
		require.NoError(t, err, "bob's reader printed %q", o.String())
		read = append(read, b)
	}
	require.Len(t, read, 2, "bob's reader printed %q; stderr: %s", o.String(), e.String())
	tokens, environ := read[0], read[1]
	t.Logf("bob read %d bytes of worker:0's %s and %d of its /proc/self/environ through %s",
		len(tokens), executor.TokenFileName, len(environ), addr)

	// The token file, byte for byte as the launcher wrote it...
	require.True(t, bytes.HasPrefix(tokens, []byte("HDTS")), "bob read Hadoop credentials: %q", tokens)
	onDisk, err := os.ReadFile(filepath.Join(taskDir(t, containerID), executor.TokenFileName))
	require.NoError(t, err)
	require.Equal(t, onDisk, tokens)
	// ...without what tfyarn keeps from the program.
	creds, err := security.ParseCredentials(tokens)
	require.NoError(t, err)
	require.Empty(t, creds.TokensOfKind(security.KindAMRMToken))
	for _, absent := range []string{rendezvous.SecretAlias, contract.StatusKeyAlias, contract.KeytabSecret,
		contract.SecretEnvAliasPrefix, secretEnv} {
		require.NotContains(t, string(tokens), absent, "bob read it from the task's token file")
	}
	// But the program's environment is a file too: --secret-env values are
	// in it.
	require.Contains(t, string(environ), "TFYARN_TFGRPC_SECRET="+secretEnv+"\x00")

	// alice ends her job; nothing of it keeps running.
	_, errOut, code := execTfyarn(t, c, bin, nil, "kill", appID)
	require.Equal(t, exitOK, code, errOut)
	_ = run.finish()
	require.Equal(t, "KILLED", statusJSONWith(t, c, bin, appID).FinalStatus)
	requireNoContainerProcess(t, appID)
}

// taskDir is the working directory of the running container's processes.
func taskDir(t *testing.T, containerID string) string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && filepath.Base(cwd) == containerID {
			return cwd
		}
	}
	t.Fatalf("no process runs in %s's working directory", containerID)
	return ""
}
