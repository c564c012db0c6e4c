//go:build notebooks

package pythonsdk

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestNotebooksAll (make test-notebooks): the TensorFlow MultiWorkerMirroredStrategy function and
// the PyTorch DDP function returning rank 0's final loss, on the test cluster.
func TestNotebooksAll(t *testing.T) {
	section := strings.Join(strings.Fields(clustertest.DocSection(t, "## The Python SDK's tests")), " ")
	require.Contains(t, section, "all four (also `tf_mwms.ipynb` and `pytorch_ddp.ipynb`) in `make test-notebooks`")
	runNotebooks(t, "tf_mwms.ipynb", "pytorch_ddp.ipynb")
}
