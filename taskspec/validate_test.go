package taskspec

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func group(t TaskType, instances int, vcores int32, memMiB, gpus int64) TaskGroup {
	return TaskGroup{Type: t, Instances: instances, Resources: Resources{VCores: vcores, MemoryMiB: memMiB, GPUs: gpus}}
}

func tfJob(groups ...TaskGroup) Job {
	return Job{Name: "train", Script: "train.py", Tasks: groups}
}

func TestValidateJob(t *testing.T) {
	chief := group(Chief, 1, 4, 2048, 0)
	workers := group(Worker, 8, 4, 8192, 1)
	ps := group(PS, 2, 2, 4096, 0)
	eval := group(Evaluator, 1, 1, 2048, 0)
	tests := []struct {
		name     string
		job      Job
		wantType TaskType
		want     string // empty: valid
	}{
		{"full TF job", tfJob(chief, workers, ps, eval, group(TensorBoard, 1, 1, 1024, 0)), "", ""},
		{"generic command", Job{Command: "hostname", Tasks: []TaskGroup{group(Worker, 3, 1, 256, 0)}}, "", ""},
		{"chief only", tfJob(chief), "", ""},
		{"any order", tfJob(eval, ps, workers, chief), "", ""},
		{"no tasks", tfJob(), "", "the job has no tasks; give at least one task group, e.g. --worker 1c"},
		{"two chiefs", tfJob(group(Chief, 2, 1, 1, 0)), Chief, "chief has 2 instances; a job has at most 1 chief"},
		{"two evaluators", tfJob(chief, group(Evaluator, 2, 1, 1, 0)), Evaluator, "evaluator has 2 instances; a job has at most 1 evaluator"},
		{"ps without workers", tfJob(chief, ps), PS, "ps tasks serve variables to workers, but the job has no worker; add --worker or drop --ps"},
		{"evaluator alone", tfJob(eval), "", "the job has no chief and no worker; add --chief or --worker, which run the training"},
		{"zero instances", tfJob(group(Worker, 0, 1, 1, 0)), Worker, "worker has 0 instances; give at least 1"},
		{"too many instances", tfJob(group(Worker, 10001, 1, 1, 0)), Worker, "worker has 10001 instances, more than the maximum of 10000"},
		{"zero vcores", tfJob(group(Worker, 1, 0, 1, 0)), Worker, "worker asks 0 vcores per task; give at least 1"},
		{"zero memory", tfJob(group(Worker, 1, 1, 0, 0)), Worker, "worker asks 0 MiB per task; give at least 1 MiB"},
		{"negative GPUs", tfJob(group(Worker, 1, 1, 1, -1)), Worker, "worker asks -1 GPUs per task; give 0 or more"},
		{"duplicate type", tfJob(workers, workers), Worker, "worker is given twice; give one group per task type"},
		{"unknown type", tfJob(chief, group("master", 1, 1, 1, 0)), "master", `unknown task type "master"; expected one of chief, worker, ps, evaluator, tensorboard`},
		{"no program", Job{Tasks: []TaskGroup{chief}}, "", "the job has nothing to run; give a command or a script"},
		{"both programs", Job{Command: "a", Script: "b.py", Tasks: []TaskGroup{chief}}, "", `the job has both a command ("a") and a script ("b.py"); give one`},
		{"bad env name", Job{Script: "t.py", Env: map[string]string{"A=B": "1"}, Tasks: []TaskGroup{chief}}, "", `environment variable name "A=B" is invalid; a name is letters, digits and _, not starting with a digit`},
		{"env name runs a command", Job{Script: "t.py", Env: map[string]string{"A;touch /tmp/x;B": "1"}, Tasks: []TaskGroup{chief}}, "", `environment variable name "A;touch /tmp/x;B" is invalid; a name is letters, digits and _, not starting with a digit`},
		{"env name starts with a digit", Job{Script: "t.py", Env: map[string]string{"1A": "1"}, Tasks: []TaskGroup{chief}}, "", `environment variable name "1A" is invalid; a name is letters, digits and _, not starting with a digit`},
		{"env name with dash", Job{Script: "t.py", Env: map[string]string{"A-B": "1"}, Tasks: []TaskGroup{chief}}, "", `environment variable name "A-B" is invalid; a name is letters, digits and _, not starting with a digit`},
		{"good env", Job{Script: "t.py", Env: map[string]string{"_A1": "$(x)`y`{{z}}<CPS>", "b": ""}, Tasks: []TaskGroup{chief}}, "", ""},
		{"NUL in an argument", Job{Command: "echo", Args: []string{"a\x00b"}, Tasks: []TaskGroup{chief}}, "", `argument 1 ("a\x00b") holds a NUL byte, which no program can receive; drop it`},
		{"NUL in a value", Job{Command: "echo", Env: map[string]string{"A": "\x00"}, Tasks: []TaskGroup{chief}}, "", `environment variable A holds a NUL byte, which no program can receive; drop it`},
		{"program too long", Job{Command: "echo", Args: []string{strings.Repeat("x", MaxProgramBytes)}, Tasks: []TaskGroup{chief}}, "", "the command, its arguments and the environment are 262149 bytes; at most 262144 fit (ship long inputs with --files)"},
		{"excluded nodes", Job{Script: "t.py", ExcludeNodes: []string{"nm1.example.com", "gpu-07"}, MaxNodeFailures: NoNodeExclusion, Tasks: []TaskGroup{chief}}, "", ""},
		{"excluded node not a host", Job{Script: "t.py", ExcludeNodes: []string{"*"}, Tasks: []TaskGroup{chief}}, "", `--exclude-nodes: "*" is not a node's host name; give host names as YARN lists them (yarn node -list), comma-separated`},
		{"excluded node with a port", Job{Script: "t.py", ExcludeNodes: []string{"nm1:8041"}, Tasks: []TaskGroup{chief}}, "", `--exclude-nodes: "nm1:8041" is not a node's host name; give host names as YARN lists them (yarn node -list), comma-separated`},
		{"oom grow", Job{Script: "t.py", OOMGrow: 1.5, Tasks: []TaskGroup{chief}}, "", ""},
		{"oom grow not above 1", Job{Script: "t.py", OOMGrow: 1, Tasks: []TaskGroup{chief}}, "", "--oom-grow 1: give a factor above 1 and at most 16, e.g. 2"},
		{"oom grow too large", Job{Script: "t.py", OOMGrow: 100, Tasks: []TaskGroup{chief}}, "", "--oom-grow 100: give a factor above 1 and at most 16, e.g. 2"},
		{"log rules", Job{Script: "t.py", FailOnLog: "loss is NaN", ExcludeNodeOnLog: `Xid (79|48)|uncorrectable ECC`, Tasks: []TaskGroup{chief}}, "", ""},
		{"bad log rule", Job{Script: "t.py", FailOnLog: "(a", Tasks: []TaskGroup{chief}}, "", "--fail-on-log \"(a\": missing closing ): `(a`; give an RE2 expression, e.g. 'Xid 79|uncorrectable ECC'"},
		{"not RE2", Job{Script: "t.py", ExcludeNodeOnLog: `(?=x)`, Tasks: []TaskGroup{chief}}, "", "--exclude-node-on-log \"(?=x)\": invalid or unsupported Perl syntax: `(?=`; give an RE2 expression, e.g. 'Xid 79|uncorrectable ECC'"},
		{"negative node failures", Job{Script: "t.py", MaxNodeFailures: -2, Tasks: []TaskGroup{chief}}, "", "--max-node-failures -2 is negative; give 0 (never exclude a node) or more"},
		{"bad queue", Job{Script: "t.py", Queue: "ml gpu", Tasks: []TaskGroup{chief}}, "", `queue "ml gpu" has spaces or control characters`},
		{"bad name", Job{Script: "t.py", Name: "a\nb", Tasks: []TaskGroup{chief}}, "", `job name "a\nb" has control characters`},
		{"good labels", Job{Script: "t.py", NodeLabel: "cpu", Tasks: []TaskGroup{{Type: Chief, Instances: 1, Resources: chief.Resources, NodeLabel: "gpu_v-100"}}}, "", ""},
		{"bad job label", Job{Script: "t.py", NodeLabel: "a&&b", Tasks: []TaskGroup{chief}}, "", `the job's node label "a&&b" is invalid; a label is a letter or digit followed by letters, digits, - or _`},
		{"bad group label", Job{Script: "t.py", Tasks: []TaskGroup{{Type: Chief, Instances: 1, Resources: chief.Resources, NodeLabel: "-gpu"}}}, Chief, `chief's node label "-gpu" is invalid; a label is a letter or digit followed by letters, digits, - or _`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.job.Validate(ClusterLimits{})
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.want)
			var ve *ValidationError
			require.True(t, errors.As(err, &ve))
			require.Equal(t, tt.wantType, ve.TaskType)
		})
	}
}

func TestValidateAgainstCluster(t *testing.T) {
	gpuCluster := ClusterLimits{Known: true, MaxMemoryMiB: 8192, MaxVCores: 8, KnowsGPUs: true, MaxGPUs: 2}
	cpuCluster := ClusterLimits{Known: true, MaxMemoryMiB: 8192, MaxVCores: 8}
	tests := []struct {
		name   string
		group  TaskGroup
		limits ClusterLimits
		want   string
	}{
		{"fits exactly", group(Worker, 3, 8, 8192, 2), gpuCluster, ""},
		{"limits unknown", group(Worker, 3, 64, 1<<20, 9), ClusterLimits{}, ""},
		{"too many vcores", group(Worker, 3, 16, 1024, 0), gpuCluster,
			"worker asks 16 vcores per task but the cluster's maximum allocation is 8 vcores; ask for fewer"},
		{"too much memory", group(Worker, 3, 1, 16384, 0), gpuCluster,
			"worker asks 16 GiB per task but the cluster's maximum allocation is 8 GiB; ask for less memory"},
		{"too many GPUs", group(Worker, 3, 1, 1024, 4), gpuCluster,
			"worker asks 4 GPUs per task but the cluster's maximum allocation is 2 GPUs; ask for fewer"},
		{"no GPU resource type", group(Worker, 3, 1, 1024, 1), cpuCluster,
			"worker asks 1 GPU per task but the cluster does not schedule GPUs (no resource type yarn.io/gpu); drop the gpu part of the spec or use a GPU cluster"},
		{"zero GPUs on a CPU cluster", group(Worker, 3, 1, 1024, 0), cpuCluster, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tfJob(tt.group).Validate(tt.limits)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.want)
			require.EqualError(t, CheckFits(tt.group, tt.limits), tt.want)
		})
	}
}

func TestValidateReportsGroupsInJobOrder(t *testing.T) {
	limits := ClusterLimits{Known: true, MaxMemoryMiB: 1024, MaxVCores: 1}
	job := tfJob(group(Worker, 1, 2, 1, 0), group(Chief, 1, 2, 1, 0))
	err := job.Validate(limits)
	require.ErrorContains(t, err, "chief asks 2 vcores")
}

func TestTaskIDs(t *testing.T) {
	id, err := ParseTaskID("worker:3")
	require.NoError(t, err)
	require.Equal(t, TaskID{Worker, 3}, id)
	require.Equal(t, "worker:3", id.String())

	id, err = ParseTaskID("Chief")
	require.NoError(t, err)
	require.Equal(t, TaskID{Chief, 0}, id)

	for _, bad := range []string{"master:0", "worker:", "worker:-1", "worker:x", ""} {
		_, err := ParseTaskID(bad)
		require.Error(t, err, bad)
	}
}

func TestSortGroupsAndJobHelpers(t *testing.T) {
	groups := []TaskGroup{group(TensorBoard, 1, 1, 1, 0), group(PS, 1, 1, 1, 0), group(Evaluator, 1, 1, 1, 0), group(Worker, 2, 1, 1, 0), group(Chief, 1, 1, 1, 0)}
	SortGroups(groups)
	var order []TaskType
	for _, g := range groups {
		order = append(order, g.Type)
	}
	require.Equal(t, TaskTypes(), order)

	job := Job{NodeLabel: "cpu", Tasks: groups}
	require.Equal(t, 6, job.TaskCount())
	w, ok := job.Group(Worker)
	require.True(t, ok)
	require.Equal(t, []TaskID{{Worker, 0}, {Worker, 1}}, w.TaskIDs())
	require.Equal(t, "cpu", job.NodeLabelFor(w))
	w.NodeLabel = "gpu"
	require.Equal(t, "gpu", job.NodeLabelFor(w))
	require.Equal(t, "4 vcores, 2 GiB, 1 GPU", Resources{VCores: 4, MemoryMiB: 2048, GPUs: 1}.String())
}
