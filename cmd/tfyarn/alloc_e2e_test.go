//go:build e2e

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/tfyarn/tfyarn/internal/appmaster"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Issue 10, the ApplicationMaster's side: nothing waits for containers
// forever, and what the RM refuses ends the job at once with its reason.
//
//	go test -tags e2e -run E2EAlloc ./cmd/tfyarn/
func TestE2EAlloc(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	// Both wait out an --alloc-timeout, on nodes of their own: the deadline case fills the two
	// nodes without a label, the GPU case the gpu node's GPUs. Together they take the time of one.
	clustertest.Subtests(t, 2,
		clustertest.Subtest{Name: "gpu wait", Run: func(t *testing.T) { testAllocGPUWait(t, c, bin) }},
		clustertest.Subtest{Name: "deadline", Run: func(t *testing.T) { testAllocDeadline(t, c, bin) }})
	t.Run("refused label", func(t *testing.T) { testAllocRefusedLabel(t, c) })
	t.Run("localization failure", func(t *testing.T) { testAllocLocalizationFailure(t, c, bin) })
}

// testAllocDeadline: a worker that fits the cluster but not what is free
// now (another job holds the node) ends the job at --alloc-timeout, naming
// the task, its shape and what the cluster offers.
func testAllocDeadline(t *testing.T, c *clustertest.Cluster, bin string) {
	// The blocker's two workers hold 7 GiB of each of the two 8 GiB nodes without a label (its
	// AM 256 MiB more of one): no 2 GiB left anywhere.
	marker := filepath.Join(clustertest.ContainerDir(t), "blocker-running")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	blocker := exec.CommandContext(ctx, bin, "run", "--worker", "2x1c,7g", "--name", "e2e-alloc-blocker", "--output", "json",
		"--", "sh", "-c", "touch "+marker+".$TFYARN_TASK_INDEX; sleep 200")
	blocker.Env = c.Env()
	var bout, berr bytes.Buffer
	blocker.Stdout, blocker.Stderr = &bout, &berr
	require.NoError(t, blocker.Start())
	defer func() {
		// Kill the blocker's application, then wait for its client.
		if id := appIDIn(berr.String() + bout.String()); id != "" {
			_, _, _ = execTfyarn(t, c, bin, nil, "kill", id)
		}
		_ = blocker.Wait()
		t.Logf("blocker: %s %s", bout.String(), berr.String())
	}()
	for start := time.Now(); ; time.Sleep(500 * time.Millisecond) {
		_, err0 := os.Stat(marker + ".0")
		_, err1 := os.Stat(marker + ".1")
		if err0 == nil && err1 == nil {
			break
		}
		require.Less(t, time.Since(start), 2*time.Minute, "the blocker never ran: %s", berr.String())
	}

	const timeout = 20 * time.Second
	start := time.Now()
	stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, nil, "run", "--worker", "1c,2g",
		"--alloc-timeout", timeout.String(), "--name", "e2e-alloc-deadline", "--output", "json", "--", "sleep", "300")
	took := time.Since(start)
	t.Logf("%.1fs\nstdout: %s\nstderr: %s", took.Seconds(), stdout, stderr)
	require.Equal(t, exitJobFailed, code)
	r := runJSON(t, stdout)
	require.Equal(t, "FAILED", r.FinalStatus)
	require.True(t, strings.HasPrefix(r.Diagnostics, `worker:0 (1 vcores, 2048 MiB, label "") was not allocated within 20s: `), r.Diagnostics)
	require.Contains(t, r.Diagnostics, "queue default on nodes without a label", "what the cluster offers")
	require.True(t, strings.HasSuffix(r.Diagnostics, "; ask for less or raise --alloc-timeout"), r.Diagnostics)
	require.GreaterOrEqual(t, took, timeout)
	require.Less(t, took, timeout+30*time.Second, "bounded: the deadline plus submission")

	// Nothing left: no application running, no staging directory.
	require.Equal(t, "FAILED", statusJSON(t, c, r.AppID).FinalStatus)
	out, errOut, lcode := runCLI(t, "--conf-dir", c.ConfDir, "list", "--state", "RUNNING")
	require.Equal(t, exitOK, lcode, errOut)
	require.NotContains(t, out, r.AppID)
	requireNoStaging(t, c, r.AppID)
	requireNoContainerProcess(t, r.AppID)
}

// appIDIn finds the first application id in a command's output.
func appIDIn(s string) string {
	if i := strings.Index(s, "application_"); i >= 0 {
		end := i + len("application_")
		for end < len(s) && (s[end] == '_' || s[end] >= '0' && s[end] <= '9') {
			end++
		}
		return s[i:end]
	}
	return ""
}

// testAllocRefusedLabel: the RM refuses an ask for a label it does not
// have (InvalidLabelResourceRequestException on allocate). `tfyarn run`
// refuses such a job before submitting it, so the AM's side runs here as
// an unmanaged AM: the real RM, the real AMRM client, the real loop.
func testAllocRefusedLabel(t *testing.T, c *clustertest.Cluster) {
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	rm := clientFor(t, c.ConfDir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	na, err := rm.GetNewApplication(ctx)
	require.NoError(t, err)
	id := na.GetApplicationId()
	idText := yarn.FormatApplicationID(id)
	t.Cleanup(func() {
		kctx, kcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer kcancel()
		_, _ = rm.KillApplication(kctx, id, "e2e cleanup")
	})
	require.NoError(t, rm.SubmitApplication(ctx, &hadoopyarn.ApplicationSubmissionContextProto{
		ApplicationId: id, ApplicationName: proto.String("e2e-alloc-refused"), Queue: proto.String("default"),
		ApplicationType: proto.String("TFYARN-TEST"), MaxAppAttempts: proto.Int32(1), UnmanagedAm: proto.Bool(true),
		Resource: yarn.NewResource(128, 1, nil), AmContainerSpec: &hadoopyarn.ContainerLaunchContextProto{},
	}))
	rep, err := rm.WaitApplication(ctx, id, 0, func(r *hadoopyarn.ApplicationReportProto) bool {
		return r.GetAmRmToken() != nil || yarn.IsTerminal(r.GetYarnApplicationState())
	})
	require.NoError(t, err)
	tp := rep.GetAmRmToken()
	require.NotNil(t, tp, "no AMRMToken: %s", rep.GetDiagnostics())
	addrs, err := conf.RMAddresses(hadoopconf.RMScheduler)
	require.NoError(t, err)
	prot, err := conf.RPCProtection()
	require.NoError(t, err)
	amrm, err := yarn.NewAMRMClientAt(addrs, security.Token{Identifier: tp.GetIdentifier(), Password: tp.GetPassword(), Kind: tp.GetKind(), Service: tp.GetService()}, yarn.AMOptions{Protection: prot})
	require.NoError(t, err)
	defer amrm.Close()

	g, err := taskspec.ParseSpec(taskspec.Worker, "2x1c,256m")
	require.NoError(t, err)
	g.NodeLabel = "nosuchlabel"
	chief, err := taskspec.ParseSpec(taskspec.Chief, "1c,256m")
	require.NoError(t, err)
	start := time.Now()
	res, err := appmaster.Loop(ctx, appmaster.LoopConfig{
		Job:  taskspec.Job{Command: "true", Tasks: []taskspec.TaskGroup{chief, g}},
		RM:   amrm,
		NM:   noNM{t},
		Host: "localhost",
		LaunchContext: func(core.Launch) *hadoopyarn.ContainerLaunchContextProto {
			return &hadoopyarn.ContainerLaunchContextProto{}
		},
		Logf: t.Logf,
	})
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("%s: %s after %s", idText, res.Finish.Diagnostics, took)
	require.Equal(t, core.Failed, res.Finish.Status)
	require.Equal(t, `the ResourceManager refused the worker request: label "nosuchlabel" does not exist on the cluster (InvalidLabelResourceRequestException)`, res.Finish.Diagnostics)
	require.NotContains(t, res.Finish.Diagnostics, "lost the ResourceManager")
	require.Less(t, took, 10*time.Second, "at once, not after retries")
	require.True(t, res.Unregistered)

	// The RM recorded it, and nothing runs.
	end, err := rm.WaitApplication(ctx, id, 0, func(r *hadoopyarn.ApplicationReportProto) bool {
		return yarn.IsTerminal(r.GetYarnApplicationState())
	})
	require.NoError(t, err)
	require.Equal(t, hadoopyarn.FinalApplicationStatusProto_APP_FAILED, end.GetFinalApplicationStatus())
	require.Contains(t, end.GetDiagnostics(), res.Finish.Diagnostics)
	out, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "list", "--state", "RUNNING")
	require.Equal(t, exitOK, code, errOut)
	require.NotContains(t, out, idText)
}

// noNM is a NodeManager the test never expects to be called.
type noNM struct{ t *testing.T }

func (n noNM) StartContainers(context.Context, string, []yarn.StartRequest) (*yarn.StartResult, error) {
	n.t.Errorf("startContainers called")
	return nil, fmt.Errorf("no NM")
}

func (n noNM) StopContainers(context.Context, string, []*hadoopyarn.ContainerIdProto) ([]*hadoopyarn.ContainerIdProto, []*yarn.ContainerError, error) {
	n.t.Errorf("stopContainers called")
	return nil, nil, fmt.Errorf("no NM")
}

// testAllocLocalizationFailure: an archive the NodeManager cannot unpack
// fails the job with YARN's reason, not a bare timestamp. The archive reads
// well (the client refuses one that does not, before submitting) but holds
// a hard link to a file it lacks, which tar -x refuses.
func testAllocLocalizationFailure(t *testing.T, c *clustertest.Cluster, bin string) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "data-"+randomHex(t)+".tar.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "link", Linkname: "missing", Typeflag: tar.TypeLink, Mode: 0o644}))
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(bad, buf.Bytes(), 0o644))
	start := time.Now()
	stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, nil, "run", "--worker", "1c,256m",
		"--archives", bad+"#data", "--name", "e2e-alloc-localization", "--output", "json", "--", "true")
	took := time.Since(start)
	t.Logf("%.1fs\nstdout: %s\nstderr: %s", took.Seconds(), stdout, stderr)
	require.Equal(t, exitJobFailed, code)
	r := runJSON(t, stdout)
	require.Equal(t, "FAILED", r.FinalStatus)
	require.Contains(t, r.Diagnostics, "worker:0")
	require.Contains(t, r.Diagnostics, "(exit status -1000): ")
	// YARN's reason, not the timestamp alone.
	// A PRIVATE resource's container localizer reports the unpacking's
	// cause; the NodeManager's public localizer (a PUBLIC one, see
	// hdfs.Resource) only the file.
	require.Regexp(t, `\(exit status -1000\): Download and unpack failed: `+regexp.QuoteMeta(filepath.Base(bad))+
		` (could not be unpacked \(gzip -dc \| tar -x exited with code 2|\(ARCHIVE\) could not be localized by the NodeManager)`, r.Diagnostics)
	require.Less(t, took, 90*time.Second)
	requireNoStaging(t, c, r.AppID)
	requireNoContainerProcess(t, r.AppID)
}

// testAllocGPUWait: in queue ml-gpu (default label gpu) a worker asking a
// GPU while another job holds both of the gpu node's: run says at once,
// and again while it lasts, what it waits for and where (label gpu, not
// the idle node without a label) and who holds the GPUs; the deadline's
// diagnostics name the gpu node's offer.
func testAllocGPUWait(t *testing.T, c *clustertest.Cluster, bin string) {
	marker := filepath.Join(clustertest.ContainerDir(t), "holder-running")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	holder := exec.CommandContext(ctx, bin, "run", "--queue", "ml-gpu", "--worker", "1c,256m,2gpu", "--name", "e2e-gpu-holder", "--output", "json",
		"--", "sh", "-c", "touch "+marker+"; sleep 200")
	holder.Env = c.Env()
	var hout, herr bytes.Buffer
	holder.Stdout, holder.Stderr = &hout, &herr
	require.NoError(t, holder.Start())
	defer func() {
		if id := appIDIn(herr.String() + hout.String()); id != "" {
			_, _, _ = execTfyarn(t, c, bin, nil, "kill", id)
		}
		_ = holder.Wait()
	}()
	for start := time.Now(); ; time.Sleep(500 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		require.Less(t, time.Since(start), 2*time.Minute, "the GPU holder never ran: %s", herr.String())
	}
	holderID := appIDIn(herr.String())
	require.NotEmpty(t, holderID)

	const timeout = 45 * time.Second
	stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, nil, "run", "--queue", "ml-gpu", "--worker", "1c,1g,1gpu",
		"--alloc-timeout", timeout.String(), "--name", "e2e-gpu-wait", "--output", "json", "--", "true")
	t.Logf("stdout: %s\nstderr: %s", stdout, stderr)
	require.Equal(t, exitJobFailed, code)
	r := runJSON(t, stdout)
	waiting := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(r.AppID) + ` waiting for 1 worker container \(1 vcores, 1024 MiB, 1 GPUs, label "gpu"\): queue ml-gpu on nodes labelled gpu: .*; 2 of 2 GPUs on nodes labelled gpu in use; applications holding GPUs: .*` + regexp.QuoteMeta(holderID) + ` \(2\).* \(for (\d+)s\)$`)
	lines := waiting.FindAllStringSubmatch(stderr, -1)
	require.GreaterOrEqual(t, len(lines), 2, "said at once, then again:\n%s", stderr)
	first, _ := strconv.Atoi(lines[0][1])
	require.Less(t, first, 15, "said within seconds of the wait: %s", lines[0][0])
	require.NotContains(t, stderr, "nodes without a label")
	require.Contains(t, r.Diagnostics, `worker:0 (1 vcores, 1024 MiB, 1 GPUs, label "gpu") was not allocated within 45s: queue ml-gpu on nodes labelled gpu: `)
	require.NotContains(t, r.Diagnostics, "without a label")
}
