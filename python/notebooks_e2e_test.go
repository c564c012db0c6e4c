//go:build e2e

package pythonsdk

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestE2ENotebooks: the backend="local" notebook (a value and every task's, a task's traceback in
// the cell), and on YARN a failing function whose exception and traceback show in the cell and a
// submitted function whose value job.wait() returns, as docs/python.md says; the TensorFlow and
// PyTorch notebooks run in make test-notebooks.
func TestE2ENotebooks(t *testing.T) {
	section := clustertest.DocSection(t, "## The Python SDK's tests")
	require.Contains(t, section, "`local.ipynb` and `failing.ipynb` in `make test`")
	runNotebooks(t, "local.ipynb", "failing.ipynb")
}
