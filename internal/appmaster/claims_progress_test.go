package appmaster

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/appmaster/webui"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
)

// TestClaimsProgressREADME pins what README's "Training progress" section
// names to the code: the variable, the bound, the file's two forms, the
// rate's window, the status line's shape, the example's callback and the
// PyTorch snippet's format. The behaviour is TestE2EProgress's,
// TestE2EProgressKeras', executor's TestProgress*, the core's
// TestJobProgress and TestProgressRateAndETA, TestStatusPageProgress.
func TestClaimsProgressREADME(t *testing.T) {
	section := clustertest.DocSection(t, "## Training progress")
	flat := strings.Join(strings.Fields(section), " ")

	require.Contains(t, flat, "`"+contract.EnvProgressFile+"`")
	require.Contains(t, flat, "at most 64 bytes")
	require.Equal(t, 64, contract.MaxProgressFileSize)
	for _, s := range []string{"120/1000", "0.12"} {
		require.Contains(t, flat, "`"+s+"`")
		_, err := contract.ParseProgress([]byte(s))
		require.NoError(t, err, s)
	}
	require.Contains(t, flat, "measured over the last minute")
	require.Equal(t, "1m0s", core.ProgressWindow.String())
	require.Contains(t, flat, "else worker:0's")
	require.Contains(t, flat, "the slowest reporting worker's")

	// The status line as shown is what ProgressText writes for it.
	line := regexp.MustCompile("`Training: ([^`]+)`").FindStringSubmatch(flat)
	require.NotNil(t, line)
	rate, eta := 2.0, 6.0
	require.Equal(t, line[1], webui.ProgressText(&contract.JobProgress{Progress: contract.Progress{Fraction: 0.4, Step: 8, Total: 20}, Task: "worker:0", StepsPerSecond: &rate, ETASeconds: &eta}))
	require.Equal(t, core.SlowestWorker, "workers")

	// The PyTorch snippet writes what the parser takes.
	require.Contains(t, section, `f.write(f"{step}/{total}\n")`)
	require.Contains(t, section, "os.replace(path + \".tmp\", path)")

	// The Keras example.
	require.Contains(t, flat, "`examples/tfyarn_progress.py`")
	ex, err := os.ReadFile(filepath.Join(clustertest.RepoRoot(), "examples", "tfyarn_progress.py"))
	require.NoError(t, err)
	require.Contains(t, string(ex), "class TfyarnProgress(tf.keras.callbacks.Callback):")
	require.Contains(t, string(ex), `os.environ.get("TFYARN_PROGRESS_FILE")`)
	require.Contains(t, string(ex), `f.write("%d/%d\n" %`)
}
