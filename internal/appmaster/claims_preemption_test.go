package appmaster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestClaimsPreemptionWarningREADME pins what README's "Preemption warning"
// section names to the code that does it: the variable, the signal, the
// file's fields (its example line is exactly what the launcher writes for
// that warning), the configuration keys and Hadoop's default wait. The
// behaviour itself is TestE2EPreemptionWarning's, TestE2EPreemptionExamples',
// executor's TestPreemption* and the core's preemption_warning transcripts.
func TestClaimsPreemptionWarningREADME(t *testing.T) {
	section := clustertest.DocSection(t, "## Preemption warning")

	require.Contains(t, section, "`"+contract.EnvPreemptionFile+"`")
	require.Contains(t, section, "gets `"+contract.PreemptionSignal+"`")
	for _, key := range []string{ConfCapacityPreemptionWait, ConfFairPreemptionWait, ConfSchedulerClass} {
		require.Contains(t, strings.ReplaceAll(section, "\n", ""), "`"+key+"`")
	}
	require.Contains(t, section, "Hadoop's default, 15 s,")
	require.Equal(t, 15*time.Second, taskspec.DefaultPreemptionWait)

	// The example line is the file the launcher writes for its deadline, reason, task and container.
	line := regexp.MustCompile("(?m)^\\{\"deadline\".*\\}$").FindString(section)
	require.NotEmpty(t, line, "the section shows the file's line")
	var w contract.PreemptionWarning
	require.NoError(t, json.Unmarshal([]byte(line), &w))
	deadline, err := time.Parse(time.RFC3339, w.Deadline)
	require.NoError(t, err)
	require.Equal(t, line+"\n", string(contract.NewPreemptionWarning(deadline, w.Reason, w.Task, w.Container).Line()))
	require.Equal(t, deadline.UnixMilli(), w.DeadlineUnixMS)
	require.Contains(t, section, "`examples/preemption_loop.py`")
	require.Contains(t, section, "`examples/preemption_keras.py`")
	for _, f := range []string{"preemption_loop.py", "preemption_keras.py"} {
		_, err := os.Stat(filepath.Join(clustertest.RepoRoot(), "examples", f))
		require.NoError(t, err)
	}
}
