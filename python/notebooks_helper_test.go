//go:build e2e || notebooks

package pythonsdk

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// notebookPython is the environment whose interpreter runs each notebook's tasks (a path every
// node of the test cluster reaches): the examples' pinned ones (scripts/tfenv.sh).
var notebookPython = map[string]string{
	"local.ipynb":       "",
	"failing.ipynb":     ".venv",
	"tf_mwms.ipynb":     ".venv",
	"pytorch_ddp.ipynb": ".venv-pytorch",
}

// runNotebooks executes each notebook of examples/notebooks/ headless (run.py, nbclient, the
// kernel of .venv-notebook) with the SDK of python/ and the binary built from this tree, against
// the test cluster, and fails with the outputs when one of its cells lacks what it must show.
func runNotebooks(t *testing.T, names ...string) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	root := clustertest.RepoRoot()
	tfenv(t, root, "notebook")
	for _, name := range names {
		env := []string{"PYTHONPATH=" + filepath.Join(root, "python"), "TFYARN_BINARY=" + bin, "PYTHONDONTWRITEBYTECODE=1"}
		if venv := notebookPython[name]; venv != "" {
			tfenv(t, root, strings.TrimPrefix(strings.TrimPrefix(venv, ".venv"), "-"))
			env = append(env, "TFYARN_NOTEBOOK_PYTHON="+filepath.Join(root, venv, "bin", "python"))
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
		cmd := exec.CommandContext(ctx, filepath.Join(root, ".venv-notebook", "bin", "python"),
			filepath.Join(root, "examples", "notebooks", "run.py"), filepath.Join(root, "examples", "notebooks", name))
		cmd.Env = c.Env(env...)
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		cancel()
		t.Logf("notebook %s took %.1f s:\n%s", name, time.Since(start).Seconds(), out)
		require.NoError(t, err, "notebook %s", name)
	}
}

// tfenv makes sure a pinned environment is there (scripts/tfenv.sh: a no-op once it is).
func tfenv(t *testing.T, root, kind string) {
	t.Helper()
	if kind == "" {
		kind = "tensorflow"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "tfenv.sh"), kind)
	cmd.Dir = root
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "scripts/tfenv.sh %s: %s", kind, out)
}
