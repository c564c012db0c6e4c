//go:build e2e

package pythonsdk

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestE2ENotebooks: the backend="local" notebook (a value and every task's, a task's traceback in
// the cell), and on YARN a failing function whose exception and traceback show in the cell and a
// submitted function whose value job.wait() returns, as docs/python.md says; the TensorFlow and
// PyTorch notebooks run in make test-notebooks. First, with the real binary and no cluster, a
// task refuses a function pickled by another Python minor version.
func TestE2ENotebooks(t *testing.T) {
	section := clustertest.DocSection(t, "## The Python SDK's tests")
	require.Contains(t, section, "`local.ipynb` and `failing.ipynb` in `make test`")
	checkPythonMismatch(t)
	runNotebooks(t, "local.ipynb", "failing.ipynb")
}

// mismatchClient ships a function whose payload names Python 3.1 (the client's version faked: the
// test cluster has one minor version) with the framework and interpreter its arguments name, and
// prints the JobFailed the SDK raises. It allows two restarts, which the task's refusal rules out
// (TFYARN_NO_RESTART_FILE): a restart would run the same interpreter.
const mismatchClient = `
import sys
import tfyarn
from tfyarn import _ship
_ship.python_version = lambda: "3.1"
try:
    tfyarn.run(lambda: 1, worker="1c", backend="local", live=False, framework=sys.argv[1], python=sys.argv[2], max_restarts=2)
except tfyarn.JobFailed as e:
    print("JobFailed:", e)
`

// checkPythonMismatch: the task's one line reaches the job's diagnostics and the SDK's JobFailed
// through the real binary (docs/python.md, What the tasks need), under torchrun too (its failure
// summary quotes the process's error file); run --local quotes a failed task's last stderr lines
// as the ApplicationMaster does (internal/appmaster/core.WithStderr).
func checkPythonMismatch(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	root := clustertest.RepoRoot()
	tfenv(t, root, "pytorch")
	line := `tfyarn: the function was pickled by Python 3\.1 but this task runs Python 3\.\d+ \(\S+\): ` +
		`run the job with a Python 3\.1 interpreter \(python=\.\.\.\) or an environment that has one \(env=\.\.\.\)`
	for _, c := range []struct{ framework, python, quoted string }{
		// The line, also the task's last stderr line, is said once.
		{"tensorflow", "python3", `worker:0 failed: exit code 2; it asked not to be restarted: ` + line + "\n"},
		{"pytorch", filepath.Join(root, ".venv-pytorch", "bin", "python"), `worker:0 failed: exit code 1; it asked not to be restarted: ` + line + `; last stderr of worker:0: .*traceback : ` + line + ` \| =+\n`},
	} {
		dir := t.TempDir()
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, filepath.Join(root, ".venv-notebook", "bin", "python"), "-c", mismatchClient, c.framework, c.python)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "python"), "TFYARN_BINARY="+bin,
			"PYTHONDONTWRITEBYTECODE=1", "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "TMPDIR="+dir)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		cancel()
		t.Logf("the Python mismatch (%s) took %.1f s:\n%s", c.framework, time.Since(start).Seconds(), out)
		require.NoError(t, err)
		require.Regexp(t, `JobFailed: application local failed: task worker:0 failed, `+c.quoted, string(out))
	}
}
