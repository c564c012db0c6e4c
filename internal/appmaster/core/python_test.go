package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// GNU find quotes the path it could not enter by locale; each form is
// recognised, under the environment's links only.
func TestPythonUnreachable(t *testing.T) {
	facts := PythonFacts{Links: []string{"env", "env.layer00"}, Base: "/root/.pyenv/versions/3.11.7/bin/python3.11", User: "alice"}
	want := "the job's Python environment links bin/python3.11 to /root/.pyenv/versions/3.11.7/bin/python3.11, which user alice cannot reach on nm2.tfyarn.test"
	for _, tc := range []struct {
		name, diag, want string
	}{
		{"utf-8 quotes", "Last 4096 bytes of prelaunch.err :\nfind: ‘./env.layer00/bin/python3.11’: Permission denied\n", want},
		{"C locale quotes", "find: `./env/bin/python3.11': Permission denied", want},
		{"plain quotes", "find: './env/bin/python3.11': Permission denied", want},
		{"not an interpreter", "find: './env/lib/data': Permission denied",
			"the job's Python environment links lib/data to a path outside it, which user alice cannot reach on nm2.tfyarn.test"},
		{"another link", "find: './data/x': Permission denied", ""},
		{"another failure", "find: './env/bin/python3': No such file or directory", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := facts.unreachable(tc.diag, "nm2.tfyarn.test:8041")
			require.Equal(t, tc.want != "", ok, got)
			require.Contains(t, got, tc.want)
		})
	}
	_, ok := PythonFacts{}.unreachable("find: './env/bin/python3': Permission denied", "n:1")
	require.False(t, ok, "a job without an environment")
}
