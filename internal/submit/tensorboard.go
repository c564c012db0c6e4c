package submit

import (
	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/taskspec"
)

// DefaultTensorBoardSpec is the TensorBoard task's container when
// `run --tensorboard` names none.
const DefaultTensorBoardSpec = "1c,1g"

// tensorBoardCommand is what the TensorBoard task runs: TensorBoard from
// the job's Python (inside --env when there is one) on logDir, listening
// at the port its launcher reserved (TFYARN_TASK_PORT) on the node's host
// address the task registers (NM_HOST, as YARN names the node), not on
// every interface (--bind_all) nor only on loopback, so the URL is the
// task's registered host:port. Without NM_HOST, every interface. logDir is
// passed as an argument, never pasted into the shell text.
func tensorBoardCommand(python, logDir string) []string {
	return []string{"sh", "-c",
		`exec "$0" -m tensorboard.main --logdir "$1" --port "$TFYARN_TASK_PORT" --host "${NM_HOST:-0.0.0.0}"`,
		python, logDir}
}

// checkTensorBoard holds a job's TensorBoard task to what it needs: a log
// directory, and a rule that stops it (TensorBoard never exits by itself,
// so under --success all the job would never end).
func (j Job) checkTensorBoard() error {
	_, has := j.Group(taskspec.TensorBoard)
	switch {
	case has && j.TensorBoardLogDir == "":
		return invalidf("a TensorBoard task needs the log directory to serve (--logdir PATH)")
	case !has && j.TensorBoardLogDir != "":
		return invalidf("--logdir %q is TensorBoard's: add --tensorboard [SPEC]", j.TensorBoardLogDir)
	case has:
		rule, err := taskspec.SuccessRuleOf(j.Success, j.Job)
		if err == nil && rule != taskspec.SuccessChief {
			return invalidf("a TensorBoard task never exits by itself: it needs --success chief (it is stopped once the chief succeeded), not --success %s", rule)
		}
	}
	return nil
}

// taskCommands are the job file's per-type commands (contract.JobFile.Commands).
func (j Job) taskCommands() map[taskspec.TaskType][]string {
	if _, has := j.Group(taskspec.TensorBoard); !has {
		return nil
	}
	return map[taskspec.TaskType][]string{taskspec.TensorBoard: tensorBoardCommand(shipplan.Python(j.PythonEnv, j.Python), j.TensorBoardLogDir)}
}
