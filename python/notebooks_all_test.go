//go:build notebooks

package pythonsdk

import "testing"

// TestNotebooksAll (make test-notebooks): the TensorFlow MultiWorkerMirroredStrategy function and
// the PyTorch DDP function returning rank 0's final loss, on the test cluster.
func TestNotebooksAll(t *testing.T) {
	runNotebooks(t, "tf_mwms.ipynb", "pytorch_ddp.ipynb")
}
