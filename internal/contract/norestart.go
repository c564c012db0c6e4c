package contract

import "fmt"

// Asking not to be restarted: the launcher sets EnvNoRestartFile in every task program's
// environment. A program that knows a restart cannot help (malformed input, a function pickled by
// another Python, a configuration it refuses) writes one line there saying why and exits
// non-zero. The ApplicationMaster then does not restart the job for that failure, whatever
// --max-restarts says: the job's success rule decides, as for a failure past the restarts, and
// the line is in the failure's diagnostics. The file is ignored after an exit code 0 and after a
// stop (the AM's, or the NodeManager's kill): only a failure of the program's own says it.
const (
	// EnvNoRestartFile is set in every task program's environment: the absolute path of the file
	// (it does not exist until the program writes it; a stale one is removed before).
	EnvNoRestartFile = "TFYARN_NO_RESTART_FILE"
	// MaxNoRestartRead bounds what the launcher reads of the file: the first line is the reason
	// (cut to one stderr line's length, rendezvous.MaxStderrLineLen).
	MaxNoRestartRead = 4 << 10
)

// NoRestartFileName is the file's name in the task's working directory: one per task, as run
// --local's tasks may share a directory.
func NoRestartFileName(taskType string, index int) string {
	return fmt.Sprintf("tfyarn-no-restart-%s-%d", taskType, index)
}
