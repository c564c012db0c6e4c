//go:build e2e

package client

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The Go API with a Python environment: two submissions of the same new
// venv at the same time (both pack it, both find it missing from the cache
// and upload it: the cache's write-aside-and-rename keeps one) both run it;
// a third uploads nothing.
//
//	go test -tags e2e -run E2EEnv ./client/
func TestE2EEnvConcurrentSubmissions(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	venv := filepath.Join(t.TempDir(), "venv")
	// The system's interpreter: the task runs as its user, who may not run another.
	out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", venv).CombinedOutput()
	require.NoError(t, err, "%s", out)
	sites, err := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	require.NoError(t, err)
	require.Len(t, sites, 1)
	require.NoError(t, os.WriteFile(filepath.Join(sites[0], "tfyarn_client_probe.py"), []byte("VALUE = 42\n"), 0o644))
	// Some weight, so the two uploads overlap.
	noise := make([]byte, 8<<20)
	for i := range noise {
		noise[i] = byte(i * 7919 >> 3)
	}
	require.NoError(t, os.WriteFile(filepath.Join(sites[0], "tfyarn_client_noise.bin"), noise, 0o644))

	g, err := taskspec.ParseSpec(taskspec.Worker, "1c,256m")
	require.NoError(t, err)
	newJob := func() Job {
		return Job{
			Job: taskspec.Job{Name: "tfyarn-client-e2e-env", Tasks: []taskspec.TaskGroup{g},
				Command: "python", Args: []string{"-c", "import tfyarn_client_probe as p; assert p.VALUE == 42"}},
			Binary: bin, PythonEnv: venv, Tags: []string{"e2e"},
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	results := make([]*Result, 2)
	errs := make([]error, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = RunOnYarn(ctx, Connection{conf: conf}, newJob())
		}()
	}
	wg.Wait()
	for i := range results {
		require.NoError(t, errs[i])
		require.True(t, results[i].Succeeded(), "%+v", results[i])
		requireGone(t, ctx, conf, results[i].AppID)
	}
	require.Positive(t, results[0].UploadedBytes+results[1].UploadedBytes)
	t.Logf("concurrent uploads: %d and %d bytes", results[0].UploadedBytes, results[1].UploadedBytes)

	res, err := RunOnYarn(ctx, Connection{conf: conf}, newJob())
	require.NoError(t, err)
	require.True(t, res.Succeeded(), "%+v", res)
	require.Zero(t, res.UploadedBytes)
}
