//go:build e2e && compat

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// The compatibility suite, `make test-compat`: on each Hadoop release of the suite
// (clustertest.DefaultHadoop on the main cluster, then clustertest.HadoopVersions;
// TFYARN_COMPAT_VERSIONS="3.5.0 3.1.4" for some), each other release on its own plain cluster,
// stopped once its cases ran: the combined job of make test's lane,
// a TensorFlow MultiWorkerMirroredStrategy job, a PyTorch DDP job, a GPU job on the gpu-labelled
// node, kill, and an ApplicationMaster attempt adopting the tasks of the one killed.
// docs/hadoop-versions.md is its matrix.
//
//	make test-compat
//	go test -tags 'e2e compat' -run 'TestCompat$/3.1.4' ./cmd/tfyarn/
func TestCompat(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	tf := tfPython(t, &clustertest.Cluster{Root: clustertest.RepoRoot()})
	torch := frameworkPython(t, &clustertest.Cluster{Root: clustertest.RepoRoot()}, "pytorch")
	for _, v := range compatVersions() {
		t.Run(v, func(t *testing.T) {
			c := compatCluster(t, v)
			// (A default cluster started before its facts named the release has none.)
			if got := c.Facts["hadoop.version"]; got != "" || v != clustertest.DefaultHadoop {
				require.Equal(t, v, got, "the cluster's jars say their release")
			}
			t.Run("rm-features", func(t *testing.T) { compatRMFeatures(t, c) })
			t.Run("combined", func(t *testing.T) { compatCombined(t, c, bin) })
			t.Run("tf-mwms", func(t *testing.T) { testMWMS(t, c, bin, tf) })
			t.Run("pytorch-ddp", func(t *testing.T) { compatPyTorchDDP(t, c, bin, torch) })
			t.Run("restart", func(t *testing.T) { compatFaultCase(t, c, bin, "worker-killed-with-max-restarts") })
			t.Run("gpu", func(t *testing.T) { compatGPU(t, c, bin) })
			t.Run("kill", func(t *testing.T) { compatKill(t, c, bin) })
			t.Run("am-attempt-adopts", func(t *testing.T) {
				fc := amKilledWithAttempts()
				j := startFaultJob(t, c, bin, fc.args...)
				fault := fc.inject(t, c, j)
				t.Log(fc.check(t, c, j, fault).Outcome)
			})
			if v != clustertest.DefaultHadoop { // TestE2EKerberos's, on the default release
				t.Run("kerberos", func(t *testing.T) { compatKerberos(t, c, bin, v) })
			}
		})
	}
}

// compatRMFeatures: what tfyarn's feature probe (internal/submit's probeFeatures) meets on a
// real RM: getResourceTypeInfo answers with yarn.io/gpu (so GPUs and placement constraints are
// allowed), and a method the protocol lacks is answered as yarn.IsUnknownMethod recognises, as
// a Hadoop 2 RM answers getResourceTypeInfo.
func compatRMFeatures(t *testing.T, c *clustertest.Cluster) {
	rm := clientFor(t, c.ConfDir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	types, err := rm.GetResourceTypeInfo(ctx)
	require.NoError(t, err)
	var names []string
	for _, ty := range types {
		names = append(names, ty.GetName())
	}
	require.Contains(t, names, "yarn.io/gpu")

	raw, err := ipc.NewClient(ipc.Config{Addresses: rm.Addrs(), Protocol: yarn.ApplicationClientProtocol, User: rm.User()})
	require.NoError(t, err)
	defer raw.Close()
	err = raw.Call(ctx, "getResourceTypeInfoOfTheFuture", &hadoopyarn.GetAllResourceTypeInfoRequestProto{}, &hadoopyarn.GetAllResourceTypeInfoResponseProto{})
	require.Error(t, err)
	require.True(t, yarn.IsUnknownMethod(err), "%v", err)
	t.Logf("an unknown method: %v", err)
}

// compatCluster is release v's cluster: the main one for the default release (left running),
// else the release's own, stopped once its cases ran (one such cluster at a time).
func compatCluster(t *testing.T, v string) *clustertest.Cluster {
	if v == clustertest.DefaultHadoop {
		return clustertest.Require(t)
	}
	c := clustertest.RequireHadoop(t, v)
	t.Cleanup(func() { c.Control(t, "down") })
	return c
}

// compatKerberos: the release's plain cluster stopped, its kerberos profile (KDC, every daemon
// and NodeManager with a principal of its own, containers as their users) runs a job submitted
// with alice's ticket cache, and status reads it.
func compatKerberos(t *testing.T, plain *clustertest.Cluster, bin, v string) {
	plain.Control(t, "down")
	c := clustertest.RequireHadoopKerberos(t, v)
	t.Cleanup(func() { c.Control(t, "down") })
	require.Equal(t, "kerberos", c.Profile)
	stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, []string{"HADOOP_USER_NAME="}, "run", "--name", "e2e-compat-kerberos",
		"--worker", "2x1c,256m", "--output", "json", "--", "sh", "-c", "echo hi $TFYARN_TASK")
	require.Equal(t, exitOK, code, stderr)
	r := runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	out, errOut, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME="}, "status", r.AppID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, `"user": "alice"`)
}

// compatFaultCase runs the fault suite's case of that name (faultCases) on c.
func compatFaultCase(t *testing.T, c *clustertest.Cluster, bin, name string) {
	for _, fc := range faultCases() {
		if fc.name == name {
			j := startFaultJob(t, c, bin, fc.args...)
			fault := fc.inject(t, c, j)
			t.Log(fc.check(t, c, j, fault).Outcome)
			return
		}
	}
	t.Fatalf("no fault case %q", name)
}

// compatVersions: TFYARN_COMPAT_VERSIONS, else every release of the suite, the default first.
func compatVersions() []string {
	if s := strings.Fields(os.Getenv("TFYARN_COMPAT_VERSIONS")); len(s) > 0 {
		return s
	}
	all := []string{clustertest.DefaultHadoop}
	for _, v := range clustertest.HadoopVersions {
		all = append(all, v.Version)
	}
	return all
}

// compatPyTorchDDP: two workers of two processes each (torchrun), all four ranks all-reduce.
func compatPyTorchDDP(t *testing.T, c *clustertest.Cluster, bin, python string) {
	stdout, stderr, code := execTfyarnFor(t, c, bin, 6*time.Minute, nil, "run", "--name", "e2e-compat-ddp",
		"--framework", "pytorch", "--worker", "2x1c,2560m", "--nproc-per-node", "2", "--python", python,
		"--output", "json", filepath.Join(c.Root, "examples", "pytorch_ddp.py"), "--", "--steps", "3")
	require.Equal(t, exitOK, code, stderr)
	r := runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	requireDDPRanks(t, aggregatedLogs(t, c, bin, r.AppID), 4)
}

// compatGPU: a task asking yarn.io/gpu in queue ml-gpu runs on the gpu-labelled NodeManager
// (nm1) and succeeds: the RM knows the resource type and the node label.
func compatGPU(t *testing.T, c *clustertest.Cluster, bin string) {
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--name", "e2e-compat-gpu", "--queue", "ml-gpu",
		"--worker", "1c,256m,1gpu", "--output", "json", "--", "true")
	require.Equal(t, exitOK, code, stderr)
	r := runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	nodes, _ := taskNodes(t, c, r.AppID)
	require.Equal(t, c.Facts["nm1"], nodes["worker:0"], "the gpu-labelled node")
}

// compatKill: tfyarn kill ends a running job KILLED, and its run exits 1.
func compatKill(t *testing.T, c *clustertest.Cluster, bin string) {
	j := startFaultJob(t, c, bin, "--worker", "1c,256m", "--", "sh", "-c", sleepForever)
	j.waitRegistered(t, "worker:0")
	out, errOut, code := execTfyarn(t, c, bin, nil, "kill", j.appID)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "KILLED")
	select {
	case <-j.exited:
	case <-time.After(time.Minute):
		t.Fatalf("%s: tfyarn run still running a minute after the kill; stderr:\n%s", j.appID, j.stderr())
	}
	require.Equal(t, exitJobFailed, j.cmd.ProcessState.ExitCode(), j.stderr())
	require.Equal(t, "KILLED", statusJSON(t, c, j.appID).FinalStatus)
}
