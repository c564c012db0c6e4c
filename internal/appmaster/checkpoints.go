package appmaster

import (
	"strings"

	"github.com/tfyarn/tfyarn/internal/checkpoint"
	"github.com/tfyarn/tfyarn/internal/contract"
)

// checkpointEnv tells every task's launcher where the job keeps its
// checkpoints (run --checkpoint; checkpoint.EnvStore): the directory the
// client resolved and made, the application, the lead task and how to
// reach HDFS (the job file's HDFS keys; no secret).
func checkpointEnv(jf contract.JobFile, taskEnv map[string]string) {
	c := jf.Job.Checkpoint
	if c == nil {
		return
	}
	conf := map[string]string{}
	for k, v := range jf.Conf {
		if strings.HasPrefix(k, "fs.") || strings.HasPrefix(k, "dfs.") || strings.HasPrefix(k, "hadoop.") {
			conf[k] = v
		}
	}
	keep := c.Keep
	if keep == 0 {
		keep = checkpoint.DefaultKeep
	}
	taskEnv[checkpoint.EnvStore] = checkpoint.Spec{
		Dir: c.Dir, Keep: keep, App: jf.AppID, Fresh: c.Fresh,
		Lead: checkpoint.LeadSlot(jf.Job), User: jf.User, Conf: conf,
	}.Encode()
}
