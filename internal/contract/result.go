package contract

import "fmt"

// A task's result: the launcher sets EnvResultFile in the program's environment; what the program
// writes there (any bytes, at most MaxResultBytes) its launcher sends to the AM once the program
// exits, whatever its exit code, and the AM keeps it on HDFS for `tfyarn result` (hdfs.AppResultsDir).
// run --local leaves the file where it is and names it in run's output.
const (
	// EnvResultFile is set in every task program's environment: the absolute path of the result
	// file (it does not exist until the program writes it; a stale one is removed before).
	EnvResultFile = "TFYARN_RESULT_FILE"
	// MaxResultBytes bounds a result: a larger file is not saved, and the launcher and run say so.
	MaxResultBytes = 64 << 20
)

// ResultFileName is the result file's name in the task's working directory: one per task, as
// run --local's tasks may share a directory.
func ResultFileName(taskType string, index int) string {
	return fmt.Sprintf("tfyarn-result-%s-%d", taskType, index)
}
