package executor

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// A launcher given no command runs the program the AM sends with the
// spec, its arguments and environment byte for byte, with the TF1
// placeholders substituted; the job's environment does not replace the
// task's identity.
func TestLauncherRunsTheAMsProgram(t *testing.T) {
	hostile := []string{"{{(touch X)}}", "<CPS>", "<LOG_DIR>", "$(id)", "`id`", "'", `"`, `\`, "a\nb", "\xff\xfe", "{task_index}"}
	env := map[string]string{"HOSTILE": strings.Join(hostile, ""), contract.EnvTask: "chief:7"}
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	// sh prints each argument and the variable in hex: od never
	// interprets what it prints.
	script := `for a in "$@"; do printf %s "$a" | od -An -v -tx1 | tr -d ' \n'; echo; done; printf %s "$HOSTILE" | od -An -v -tx1 | tr -d ' \n'; echo; echo "task=$TFYARN_TASK"`
	argv := append([]string{"sh", "-c", script, "sh"}, hostile...)
	a, _ := startAMServer(t, secret, []rendezvous.Option{rendezvous.WithPrograms(func(id taskspec.TaskID) (rendezvous.Program, bool) {
		return rendezvous.Program{Argv: argv, Env: env}, true
	})}, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0))
	l.cfg.Env = append(os.Environ(), contract.EnvTask+"=worker:0")
	o := l.run(t)
	require.NoError(t, o.err, l.stderr.String())
	require.Equal(t, 0, o.code, l.stderr.String())

	var want strings.Builder
	for _, h := range append(hostile[:len(hostile)-1:len(hostile)-1], "0") {
		want.WriteString(hex.EncodeToString([]byte(h)) + "\n")
	}
	want.WriteString(hex.EncodeToString([]byte(env["HOSTILE"])) + "\n")
	want.WriteString("task=worker:0\n")
	require.Equal(t, want.String(), l.stdout.String())
}

// An AM that sends no program (an older one) fails the task saying so.
func TestLauncherWithoutAProgram(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0))
	o := l.run(t)
	require.Equal(t, ExitLauncherFailed, o.code)
	require.ErrorContains(t, o.err, "the AM sent no program to run")
	e, ok := a.board.Exit(id(taskspec.Worker, 0))
	require.True(t, ok)
	require.Equal(t, ExitLauncherFailed, e.ExitCode)
}

// The task's token for the job's side service comes sealed in the AM's
// program; the launcher hands it to the framework (XGBoost's DMLC_TASK_ID
// carries it to the tracker) and takes it out of the program's own
// environment.
func TestLauncherHandsTheServiceTokenToTheFramework(t *testing.T) {
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	env := map[string]string{contract.EnvJobServiceToken: "5eed"}
	argv := []string{"sh", "-c", `echo "id=$DMLC_TASK_ID token=${TFYARN_JOB_SERVICE_TOKEN-unset}"`}
	a, _ := startAMServer(t, secret, []rendezvous.Option{rendezvous.WithPrograms(func(id taskspec.TaskID) (rendezvous.Program, bool) {
		return rendezvous.Program{Argv: argv, Env: env}, true
	})}, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0))
	l.cfg.Env = append(os.Environ(), contract.EnvFramework+"=xgboost", contract.EnvJobService+"=127.0.0.1:9")
	o := l.run(t)
	require.NoError(t, o.err, l.stderr.String())
	require.Equal(t, 0, o.code, l.stderr.String())
	require.Equal(t, "id=worker:0:5eed token=unset\n", l.stdout.String())
}
