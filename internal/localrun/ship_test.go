package localrun

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/shipplan"
)

// The interpreter of a local run, as client's plan names it in a task's
// terms (shipplan.Make): under the environment's link it resolves to the
// environment's directory, as YARN's env/ is; an absolute path or a bare
// name (looked up on PATH) stays as it is.
func TestStageResolvesTheInterpreter(t *testing.T) {
	env := t.TempDir()
	for python, want := range map[string]string{
		"env/bin/python":     env + "/bin/python",
		"env/bin/python3.11": env + "/bin/python3.11",
		"/usr/bin/python3":   "/usr/bin/python3",
		"python3":            "python3",
	} {
		st, err := Stage(context.Background(), shipplan.Plan{
			Items:     []shipplan.Item{{Link: "env", Local: env, Kind: shipplan.EnvDir}},
			PythonEnv: "env", Command: python, Args: []string{"/abs/train.py"},
		})
		require.NoError(t, err, python)
		require.Equal(t, want, st.Python, python)
		require.Equal(t, env, st.EnvDir)
		require.Empty(t, st.Dir, "nothing to link: the current directory")
	}
}
