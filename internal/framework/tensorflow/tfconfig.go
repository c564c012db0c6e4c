package tensorflow

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/taskspec"
)

// tfConfig is the TF_CONFIG value of task in cluster:
//
//	{"cluster":{"chief":[..],"worker":[..],"ps":[..]},"task":{"type":"worker","index":0}}
//
// Keys come in job order, not alphabetically, so equal inputs give equal
// bytes and the value reads like the docs. Only chief, worker and ps appear
// in "cluster" (empty groups are left out); an evaluator or tensorboard task
// appears only in its own "task", as TensorFlow expects.
func tfConfig(cluster taskspec.ClusterSpec, task taskspec.TaskID) (string, error) {
	if !task.Type.Known() {
		return "", fmt.Errorf("TF_CONFIG: unknown task type %q", task.Type)
	}
	if task.Index < 0 {
		return "", fmt.Errorf("TF_CONFIG: negative index in %s", task)
	}
	if task.Type.InCluster() && task.Index >= len(cluster[task.Type]) {
		return "", fmt.Errorf("TF_CONFIG: %s is not in the cluster (%d %s tasks)", task, len(cluster[task.Type]), task.Type)
	}
	var b strings.Builder
	b.WriteString(`{"cluster":{`)
	sep := ""
	for _, t := range taskspec.TaskTypes() {
		if !t.InCluster() || len(cluster[t]) == 0 {
			continue
		}
		b.WriteString(sep)
		sep = ","
		writeJSON(&b, string(t))
		b.WriteByte(':')
		writeJSON(&b, cluster[t])
	}
	b.WriteString(`},"task":{"type":`)
	writeJSON(&b, string(task.Type))
	b.WriteString(`,"index":`)
	b.WriteString(strconv.Itoa(task.Index))
	b.WriteString(`}}`)
	return b.String(), nil
}

// writeJSON encodes strings and string slices, which cannot fail.
func writeJSON(b *strings.Builder, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	b.Write(out)
}

// substitutePlaceholders returns args with the TF1 placeholders filled in for
// task: {ps_hosts} and {worker_hosts} become the comma-joined addresses of
// those groups, {job_name} the task's type, {task_index} its index. A
// placeholder in double braces is the escape for the text itself:
// {{task_index}} becomes {task_index}. Other text, including unknown
// {names}, is left alone, and substituted values are never substituted
// again.
func substitutePlaceholders(args []string, cluster taskspec.ClusterSpec, task taskspec.TaskID) []string {
	// A Replacer tries its pairs in argument order at each position, so
	// the escaped forms win over the placeholders they contain.
	r := strings.NewReplacer(
		"{{ps_hosts}}", "{ps_hosts}",
		"{{worker_hosts}}", "{worker_hosts}",
		"{{job_name}}", "{job_name}",
		"{{task_index}}", "{task_index}",
		"{ps_hosts}", strings.Join(cluster[taskspec.PS], ","),
		"{worker_hosts}", strings.Join(cluster[taskspec.Worker], ","),
		"{job_name}", string(task.Type),
		"{task_index}", strconv.Itoa(task.Index),
	)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}
