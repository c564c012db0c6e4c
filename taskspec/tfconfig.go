package taskspec

import (
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
)

// ClusterSpec is TensorFlow's cluster: for each task type, its tasks'
// "host:port" addresses by index.
type ClusterSpec map[TaskType][]string

// ClusterSpecFromAddresses builds the cluster of a job whose tasks have
// reported their addresses. It insists on a complete picture: every chief,
// worker and ps task of groups has an address, and no address belongs to a
// task outside groups, because a TF_CONFIG with a hole hangs TensorFlow
// instead of failing. Evaluator and tensorboard addresses may be present
// and are left out, as TF_CONFIG wants.
func ClusterSpecFromAddresses(groups []TaskGroup, addrs map[TaskID]string) (ClusterSpec, error) {
	size := map[TaskType]int{}
	for _, g := range groups {
		size[g.Type] = g.Instances
	}
	ids := make([]TaskID, 0, len(addrs))
	for id := range addrs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return lessTaskID(ids[i], ids[j]) })
	for _, id := range ids {
		n, ok := size[id.Type]
		if !ok || id.Index < 0 || id.Index >= n {
			return nil, fmt.Errorf("cluster spec: address %q is for %s, which is not a task of the job", addrs[id], id)
		}
		if err := checkHostPort(addrs[id]); err != nil {
			return nil, fmt.Errorf("cluster spec: %s: %w", id, err)
		}
	}
	cluster := ClusterSpec{}
	for _, g := range groups {
		if !g.Type.InCluster() {
			continue
		}
		hosts := make([]string, g.Instances)
		for i := range hosts {
			addr, ok := addrs[TaskID{Type: g.Type, Index: i}]
			if !ok {
				return nil, fmt.Errorf("cluster spec: no address for %s:%d", g.Type, i)
			}
			hosts[i] = addr
		}
		cluster[g.Type] = hosts
	}
	return cluster, nil
}

func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q is not host:port", addr)
	}
	if n, err := strconv.Atoi(port); host == "" || err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("address %q is not host:port with a port in 1-65535", addr)
	}
	return nil
}

// TFConfig is the TF_CONFIG value of task in cluster:
//
//	{"cluster":{"chief":[..],"worker":[..],"ps":[..]},"task":{"type":"worker","index":0}}
//
// Keys come in job order, not alphabetically, so equal inputs give equal
// bytes and the value reads like the docs. Only chief, worker and ps appear
// in "cluster" (empty groups are left out); an evaluator or tensorboard task
// appears only in its own "task", as TensorFlow expects.
func TFConfig(cluster ClusterSpec, task TaskID) (string, error) {
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
	for _, t := range TaskTypes() {
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

func lessTaskID(a, b TaskID) bool {
	ra, rb := jobOrder[a.Type], jobOrder[b.Type]
	if ra != rb {
		return ra < rb
	}
	if a.Type != b.Type {
		return a.Type < b.Type
	}
	return a.Index < b.Index
}

// Placeholders are the TF1-style markers SubstitutePlaceholders replaces in
// a task's arguments (the TFMesos/Marathon convention).
var Placeholders = []string{"{ps_hosts}", "{worker_hosts}", "{job_name}", "{task_index}"}

// SubstitutePlaceholders returns args with the TF1 placeholders filled in for
// task: {ps_hosts} and {worker_hosts} become the comma-joined addresses of
// those groups, {job_name} the task's type, {task_index} its index. A
// placeholder in double braces is the escape for the text itself:
// {{task_index}} becomes {task_index}. Other text, including unknown
// {names}, is left alone, and substituted values are never substituted
// again.
func SubstitutePlaceholders(args []string, cluster ClusterSpec, task TaskID) []string {
	// A Replacer tries its pairs in argument order at each position, so
	// the escaped forms win over the placeholders they contain.
	r := strings.NewReplacer(
		"{{ps_hosts}}", "{ps_hosts}",
		"{{worker_hosts}}", "{worker_hosts}",
		"{{job_name}}", "{job_name}",
		"{{task_index}}", "{task_index}",
		"{ps_hosts}", strings.Join(cluster[PS], ","),
		"{worker_hosts}", strings.Join(cluster[Worker], ","),
		"{job_name}", string(task.Type),
		"{task_index}", strconv.Itoa(task.Index),
	)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}
