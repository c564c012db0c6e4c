package tensorflow

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestTFConfigValue(t *testing.T) {
	full := taskspec.ClusterSpec{
		taskspec.Worker:    {"w0:2222", "w1:2222"},
		taskspec.PS:        {"p0:2222"},
		taskspec.Chief:     {"c0:2222"},
		taskspec.Evaluator: {"e0:2222"}, // never part of "cluster"
	}
	tests := []struct {
		name    string
		cluster taskspec.ClusterSpec
		task    taskspec.TaskID
		want    string
		wantErr string
	}{
		{"worker", full, taskspec.TaskID{Type: taskspec.Worker, Index: 1},
			`{"cluster":{"chief":["c0:2222"],"worker":["w0:2222","w1:2222"],"ps":["p0:2222"]},"task":{"type":"worker","index":1}}`, ""},
		{"evaluator only in task", full, taskspec.TaskID{Type: taskspec.Evaluator, Index: 0},
			`{"cluster":{"chief":["c0:2222"],"worker":["w0:2222","w1:2222"],"ps":["p0:2222"]},"task":{"type":"evaluator","index":0}}`, ""},
		{"tensorboard only in task", full, taskspec.TaskID{Type: taskspec.TensorBoard, Index: 0},
			`{"cluster":{"chief":["c0:2222"],"worker":["w0:2222","w1:2222"],"ps":["p0:2222"]},"task":{"type":"tensorboard","index":0}}`, ""},
		{"no ps", taskspec.ClusterSpec{taskspec.Chief: {"c0:1"}, taskspec.Worker: {"w0:1"}, taskspec.PS: {}}, taskspec.TaskID{Type: taskspec.Chief, Index: 0},
			`{"cluster":{"chief":["c0:1"],"worker":["w0:1"]},"task":{"type":"chief","index":0}}`, ""},
		{"empty cluster", taskspec.ClusterSpec{}, taskspec.TaskID{Type: taskspec.Evaluator, Index: 0},
			`{"cluster":{},"task":{"type":"evaluator","index":0}}`, ""},
		{"index out of cluster", full, taskspec.TaskID{Type: taskspec.Worker, Index: 2}, "", "TF_CONFIG: worker:2 is not in the cluster (2 worker tasks)"},
		{"negative index", full, taskspec.TaskID{Type: taskspec.Evaluator, Index: -1}, "", "TF_CONFIG: negative index in evaluator:-1"},
		{"unknown type", full, taskspec.TaskID{Type: "master", Index: 0}, "", `TF_CONFIG: unknown task type "master"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tfConfig(tt.cluster, tt.task)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.True(t, json.Valid([]byte(got)))
		})
	}
}

func TestSubstitutePlaceholders(t *testing.T) {
	cluster := taskspec.ClusterSpec{taskspec.Worker: {"w0:1", "w1:1"}, taskspec.PS: {"p0:1"}}
	tests := []struct {
		name    string
		cluster taskspec.ClusterSpec
		task    taskspec.TaskID
		args    []string
		want    []string
	}{
		{"TFMesos style", cluster, taskspec.TaskID{Type: taskspec.Worker, Index: 1},
			[]string{"--ps_hosts", "{ps_hosts}", "--worker_hosts={worker_hosts}", "--job_name", "{job_name}", "--task_index", "{task_index}"},
			[]string{"--ps_hosts", "p0:1", "--worker_hosts=w0:1,w1:1", "--job_name", "worker", "--task_index", "1"}},
		{"no ps", taskspec.ClusterSpec{taskspec.Worker: {"w0:1"}}, taskspec.TaskID{Type: taskspec.Worker, Index: 0},
			[]string{"{ps_hosts}|{worker_hosts}"}, []string{"|w0:1"}},
		{"unknown and repeated placeholders", cluster, taskspec.TaskID{Type: taskspec.PS, Index: 0},
			[]string{"{job_name}{job_name}", "{chief_hosts}", "{task_index", "plain"},
			[]string{"psps", "{chief_hosts}", "{task_index", "plain"}},
		{"values are not substituted again", taskspec.ClusterSpec{taskspec.Worker: {"{job_name}:1"}}, taskspec.TaskID{Type: taskspec.Worker, Index: 0},
			[]string{"{worker_hosts}"}, []string{"{job_name}:1"}},
		{"no args", cluster, taskspec.TaskID{Type: taskspec.Worker, Index: 0}, nil, []string{}},
		{"double braces escape a placeholder", cluster, taskspec.TaskID{Type: taskspec.Worker, Index: 1},
			[]string{"{{task_index}}", "x{{ps_hosts}}y{task_index}", "{{{job_name}}}", "{{worker_hosts}}{{job_name}}", "{{other}}", "{{task_index}"},
			[]string{"{task_index}", "x{ps_hosts}y1", "{{job_name}}", "{worker_hosts}{job_name}", "{{other}}", "{1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string(nil), tt.args...)
			require.Equal(t, tt.want, substitutePlaceholders(args, tt.cluster, tt.task))
			require.Equal(t, tt.args, args, "input must not change")
		})
	}
}
