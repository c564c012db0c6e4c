package taskspec

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTFConfig(t *testing.T) {
	full := ClusterSpec{
		Worker:    {"w0:2222", "w1:2222"},
		PS:        {"p0:2222"},
		Chief:     {"c0:2222"},
		Evaluator: {"e0:2222"}, // never part of "cluster"
	}
	tests := []struct {
		name    string
		cluster ClusterSpec
		task    TaskID
		want    string
		wantErr string
	}{
		{"worker", full, TaskID{Worker, 1},
			`{"cluster":{"chief":["c0:2222"],"worker":["w0:2222","w1:2222"],"ps":["p0:2222"]},"task":{"type":"worker","index":1}}`, ""},
		{"evaluator only in task", full, TaskID{Evaluator, 0},
			`{"cluster":{"chief":["c0:2222"],"worker":["w0:2222","w1:2222"],"ps":["p0:2222"]},"task":{"type":"evaluator","index":0}}`, ""},
		{"tensorboard only in task", full, TaskID{TensorBoard, 0},
			`{"cluster":{"chief":["c0:2222"],"worker":["w0:2222","w1:2222"],"ps":["p0:2222"]},"task":{"type":"tensorboard","index":0}}`, ""},
		{"no ps", ClusterSpec{Chief: {"c0:1"}, Worker: {"w0:1"}, PS: {}}, TaskID{Chief, 0},
			`{"cluster":{"chief":["c0:1"],"worker":["w0:1"]},"task":{"type":"chief","index":0}}`, ""},
		{"empty cluster", ClusterSpec{}, TaskID{Evaluator, 0},
			`{"cluster":{},"task":{"type":"evaluator","index":0}}`, ""},
		{"index out of cluster", full, TaskID{Worker, 2}, "", "TF_CONFIG: worker:2 is not in the cluster (2 worker tasks)"},
		{"negative index", full, TaskID{Evaluator, -1}, "", "TF_CONFIG: negative index in evaluator:-1"},
		{"unknown type", full, TaskID{"master", 0}, "", `TF_CONFIG: unknown task type "master"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TFConfig(tt.cluster, tt.task)
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

func TestClusterSpecFromAddresses(t *testing.T) {
	groups := []TaskGroup{group(Chief, 1, 1, 1, 0), group(Worker, 2, 1, 1, 0), group(Evaluator, 1, 1, 1, 0)}
	complete := map[TaskID]string{
		{Worker, 1}: "w1:2", {Chief, 0}: "c:1", {Worker, 0}: "w0:3", {Evaluator, 0}: "e:4",
	}
	tests := []struct {
		name    string
		addrs   map[TaskID]string
		want    ClusterSpec
		wantErr string
	}{
		{"complete", complete, ClusterSpec{Chief: {"c:1"}, Worker: {"w0:3", "w1:2"}}, ""},
		{"evaluator address optional", map[TaskID]string{{Chief, 0}: "c:1", {Worker, 0}: "w0:3", {Worker, 1}: "w1:2"},
			ClusterSpec{Chief: {"c:1"}, Worker: {"w0:3", "w1:2"}}, ""},
		{"missing worker", map[TaskID]string{{Chief, 0}: "c:1", {Worker, 1}: "w1:2"}, nil, "cluster spec: no address for worker:0"},
		{"index beyond group", map[TaskID]string{{Worker, 2}: "w2:1"}, nil, `cluster spec: address "w2:1" is for worker:2, which is not a task of the job`},
		{"type not in job", map[TaskID]string{{PS, 0}: "p:1"}, nil, `cluster spec: address "p:1" is for ps:0, which is not a task of the job`},
		{"not host:port", map[TaskID]string{{Chief, 0}: "c"}, nil, `cluster spec: chief:0: address "c" is not host:port`},
		{"bad port", map[TaskID]string{{Chief, 0}: "c:0"}, nil, `cluster spec: chief:0: address "c:0" is not host:port with a port in 1-65535`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClusterSpecFromAddresses(groups, tt.addrs)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestSubstitutePlaceholders(t *testing.T) {
	cluster := ClusterSpec{Worker: {"w0:1", "w1:1"}, PS: {"p0:1"}}
	tests := []struct {
		name    string
		cluster ClusterSpec
		task    TaskID
		args    []string
		want    []string
	}{
		{"TFMesos style", cluster, TaskID{Worker, 1},
			[]string{"--ps_hosts", "{ps_hosts}", "--worker_hosts={worker_hosts}", "--job_name", "{job_name}", "--task_index", "{task_index}"},
			[]string{"--ps_hosts", "p0:1", "--worker_hosts=w0:1,w1:1", "--job_name", "worker", "--task_index", "1"}},
		{"no ps", ClusterSpec{Worker: {"w0:1"}}, TaskID{Worker, 0},
			[]string{"{ps_hosts}|{worker_hosts}"}, []string{"|w0:1"}},
		{"unknown and repeated placeholders", cluster, TaskID{PS, 0},
			[]string{"{job_name}{job_name}", "{chief_hosts}", "{task_index", "plain"},
			[]string{"psps", "{chief_hosts}", "{task_index", "plain"}},
		{"values are not substituted again", ClusterSpec{Worker: {"{job_name}:1"}}, TaskID{Worker, 0},
			[]string{"{worker_hosts}"}, []string{"{job_name}:1"}},
		{"no args", cluster, TaskID{Worker, 0}, nil, []string{}},
		{"double braces escape a placeholder", cluster, TaskID{Worker, 1},
			[]string{"{{task_index}}", "x{{ps_hosts}}y{task_index}", "{{{job_name}}}", "{{worker_hosts}}{{job_name}}", "{{other}}", "{{task_index}"},
			[]string{"{task_index}", "x{ps_hosts}y1", "{{job_name}}", "{worker_hosts}{job_name}", "{{other}}", "{1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string(nil), tt.args...)
			require.Equal(t, tt.want, SubstitutePlaceholders(args, tt.cluster, tt.task))
			require.Equal(t, tt.args, args, "input must not change")
		})
	}
}
