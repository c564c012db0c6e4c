package executor

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/framework/tensorflow"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestTailBuffer(t *testing.T) {
	tb := newTailBuffer(3, 10)
	require.Empty(t, tb.Lines())
	fmt.Fprint(tb, "a\nb")
	require.Equal(t, []string{"a", "b"}, tb.Lines())
	fmt.Fprint(tb, "c\nd\ne\n")
	require.Equal(t, []string{"bc", "d", "e"}, tb.Lines())
	fmt.Fprint(tb, "f\n"+strings.Repeat("x", 50)+"\npartial")
	require.Equal(t, []string{"f", strings.Repeat("x", 10), "partial"}, tb.Lines())
}

func TestChildEnv(t *testing.T) {
	tf := framework.Launch{Set: map[string]string{tensorflow.EnvTFConfig: `{"x":1}`}, Fill: map[string]string{tensorflow.EnvTFReusePort: "true"}}
	env := childEnv([]string{"PATH=/bin", "TF_CONFIG=old", "TF_CONFIG=older", "PYTHONUNBUFFERED=0"}, tf, 4242)
	v, _ := lookupEnv(env, tensorflow.EnvTFConfig)
	require.Equal(t, `{"x":1}`, v)
	require.Equal(t, 1, strings.Count(strings.Join(env, "\n"), "TF_CONFIG="))
	v, _ = lookupEnv(env, contract.EnvTaskPort)
	require.Equal(t, "4242", v)
	v, _ = lookupEnv(env, EnvPythonUnbuffered)
	require.Equal(t, "0", v, "the user's choice stands")
	v, _ = lookupEnv(env, tensorflow.EnvTFReusePort)
	require.Equal(t, "true", v, "filled in when unset")
	v, _ = lookupEnv(childEnv([]string{"TF_GRPC_REUSE_PORT=False"}, tf, 1), tensorflow.EnvTFReusePort)
	require.Equal(t, "False", v, "the user's choice stands")
}

func TestConfigFromEnv(t *testing.T) {
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	creds := security.NewCredentials()
	rendezvous.AddSecret(creds, secret)
	path := filepath.Join(t.TempDir(), "container_tokens")
	require.NoError(t, creds.WriteFile(path, security.FormatWritable))

	t.Setenv(contract.EnvTask, "worker:2")
	t.Setenv(contract.EnvAMAddress, "am.example.com:40000")
	t.Setenv(contract.EnvTokenFile, path)
	t.Setenv(contract.EnvContainerID, "container_1_0001_01_000003")
	t.Setenv(contract.EnvNMHost, "node7.example.com")
	cfg, err := ConfigFromEnv([]string{"python3", "train.py"})
	require.NoError(t, err)
	require.Equal(t, taskspec.TaskID{Type: taskspec.Worker, Index: 2}, cfg.Task)
	require.Equal(t, "am.example.com:40000", cfg.AMAddress)
	require.Equal(t, secret, cfg.Secret)
	require.Equal(t, "node7.example.com", cfg.Host)
	require.Equal(t, "container_1_0001_01_000003", cfg.ContainerID)

	t.Setenv(contract.EnvNMHost, "")
	cfg, err = ConfigFromEnv([]string{"x"})
	require.NoError(t, err)
	require.NotEmpty(t, cfg.Host, "falls back to the hostname")

	require.NoError(t, security.NewCredentials().WriteFile(path, security.FormatWritable))
	_, err = ConfigFromEnv([]string{"x"})
	require.ErrorContains(t, err, rendezvous.SecretAlias)

	t.Setenv(contract.EnvAMAddress, "")
	_, err = ConfigFromEnv([]string{"x"})
	require.ErrorContains(t, err, "lacks TFYARN_AM_ADDRESS")
}

func TestRunRefusesBadConfig(t *testing.T) {
	code, err := Run(context.Background(), Config{Task: taskspec.TaskID{Type: taskspec.Worker}, Command: []string{""}})
	require.Equal(t, ExitBadConfig, code)
	require.ErrorContains(t, err, "no program")
}

// --image on a NodeManager that ignores YARN's Docker runtime: the launcher refuses to run the
// program on the host, whose PID 1 is the machine's init, not YARN's launch script.
func TestCheckInImage(t *testing.T) {
	pid1 := func(args ...string) func() ([]byte, error) {
		return func() ([]byte, error) { return []byte(strings.Join(args, "\x00") + "\x00"), nil }
	}
	onHost := func() [2]int { return [2]int{4242, 4241} }
	cfg := &Config{InitCmdline: pid1("/sbin/init"), PIDs: onHost}
	require.NoError(t, checkInImage(cfg), "no image asked")
	cfg.DockerImage = "tfyarn.test/x:1"
	require.ErrorContains(t, checkInImage(cfg), "does not run in a container of its own")
	cfg.InitCmdline = func() ([]byte, error) { return nil, os.ErrPermission }
	require.Error(t, checkInImage(cfg))
	cfg.InitCmdline = pid1("bash", "/l/usercache/alice/appcache/application_1_0001/container_1_0001_01_000002/launch_container.sh")
	require.NoError(t, checkInImage(cfg))
	cfg.InitCmdline = pid1("/sbin/docker-init", "--", "bash", "x.sh")
	require.NoError(t, checkInImage(cfg))
	cfg.InitCmdline = pid1("/sbin/init")
	cfg.PIDs = func() [2]int { return [2]int{1, 0} } // the launch script exec'd the launcher
	require.NoError(t, checkInImage(cfg))
	cfg.PIDs = func() [2]int { return [2]int{7, 1} } // ... or bash -c, whose child it is
	require.NoError(t, checkInImage(cfg))
}

// A program the container's user may not run says so, with the user and
// the node (a file without execute bits: root too is refused).
func TestStartErrorNamesTheUserAndNode(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "python3")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o644))
	_, err := startChild([]string{prog}, nil, "", io.Discard, io.Discard)
	require.Error(t, err)
	require.Equal(t, 126, startFailureCode(err))
	me, uerr := user.Current()
	require.NoError(t, uerr)
	host, herr := os.Hostname()
	require.NoError(t, herr)
	require.ErrorContains(t, startError(prog, err), "task launcher: "+prog+" cannot be run by user "+me.Username+" on "+host+" (permission denied")
	require.ErrorContains(t, startError(prog, err), "use an interpreter every user can run, e.g. /usr/bin/python3")
	_, err = startChild([]string{filepath.Join(t.TempDir(), "none")}, nil, "", io.Discard, io.Discard)
	require.Equal(t, 127, startFailureCode(err))
	require.ErrorContains(t, startError("none", err), `task launcher: starting "none": `)
}
