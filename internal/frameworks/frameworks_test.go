package frameworks

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/framework/jax"
	"github.com/tfyarn/tfyarn/internal/framework/pytorch"
	"github.com/tfyarn/tfyarn/internal/framework/tensorflow"
	"github.com/tfyarn/tfyarn/taskspec"
)

func w(i int) taskspec.TaskID { return taskspec.TaskID{Type: taskspec.Worker, Index: i} }

var twoWorkers = taskspec.ClusterSpec{taskspec.Worker: {"h0:100", "h1:200"}}

// Each framework's launch of each task, from the same replica specs: the
// table is the contract scripts rely on.
func TestLaunch(t *testing.T) {
	py := []string{"python3", "train.py", "--epochs", "{task_index}"}
	cases := []struct {
		name      string
		framework string
		task      framework.Task
		want      framework.Launch
	}{
		{
			name: "tensorflow worker: TF_CONFIG, placeholders, port held", framework: tensorflow.Name,
			task: framework.Task{ID: w(1), Cluster: twoWorkers, Port: 200, Argv: py},
			want: framework.Launch{
				Argv:     []string{"python3", "train.py", "--epochs", "1"},
				Set:      map[string]string{"TF_CONFIG": `{"cluster":{"worker":["h0:100","h1:200"]},"task":{"type":"worker","index":1}}`},
				Fill:     map[string]string{"TF_GRPC_REUSE_PORT": "true"},
				HoldPort: true,
				Describe: `TF_CONFIG={"cluster":{"worker":["h0:100","h1:200"]},"task":{"type":"worker","index":1}}`,
			},
		},
		{
			name: "tensorflow, reuse port turned off by the user: port freed", framework: tensorflow.Name,
			task: framework.Task{ID: w(0), Cluster: twoWorkers, Port: 100, Argv: []string{"p"}, Env: []string{"TF_GRPC_REUSE_PORT=False"}},
			want: framework.Launch{
				Argv:     []string{"p"},
				Set:      map[string]string{"TF_CONFIG": `{"cluster":{"worker":["h0:100","h1:200"]},"task":{"type":"worker","index":0}}`},
				Fill:     map[string]string{"TF_GRPC_REUSE_PORT": "true"},
				Describe: `TF_CONFIG={"cluster":{"worker":["h0:100","h1:200"]},"task":{"type":"worker","index":0}}`,
			},
		},
		{
			name: "pytorch worker 0: torchrun, serves the store", framework: pytorch.Name,
			task: framework.Task{ID: w(0), Cluster: twoWorkers, Port: 100, Argv: []string{"python3", "ddp.py", "--steps", "3"}, ProcsPerNode: 2, RunID: "app_1-0"},
			want: framework.Launch{
				Argv: []string{"python3", "-m", "torch.distributed.run", "--nnodes=2", "--nproc-per-node=2",
					"--rdzv-backend=c10d", "--rdzv-endpoint=h0:100", "--rdzv-id=app_1-0", "--rdzv-conf=is_host=false",
					"--max-restarts=0", "ddp.py", "--steps", "3"},
				ServeStore: true,
				Describe:   "torchrun node of 2, 2 process(es), rendezvous at h0:100 (app_1-0)",
			},
		},
		{
			name: "pytorch worker 1: torchrun, client of worker 0's store; one process by default", framework: pytorch.Name,
			task: framework.Task{ID: w(1), Cluster: twoWorkers, Port: 200, Argv: []string{"py", "ddp.py"}, RunID: "r"},
			want: framework.Launch{
				Argv: []string{"py", "-m", "torch.distributed.run", "--nnodes=2", "--nproc-per-node=1",
					"--rdzv-backend=c10d", "--rdzv-endpoint=h0:100", "--rdzv-id=r", "--rdzv-conf=is_host=false",
					"--max-restarts=0", "ddp.py"},
				Describe: "torchrun node of 2, 1 process(es), rendezvous at h0:100 (r)",
			},
		},
		{
			name: "elastic pytorch: every node a client of the AM's store, MIN:MAX nodes, agents restart", framework: pytorch.Name,
			task: framework.Task{ID: w(0), Cluster: twoWorkers, Port: 100, Argv: []string{"py", "el.py"}, RunID: "r", MinNodes: 1, Store: "am:5000"},
			want: framework.Launch{
				Argv: []string{"py", "-m", "torch.distributed.run", "--nnodes=1:2", "--nproc-per-node=1",
					"--rdzv-backend=c10d", "--rdzv-endpoint=am:5000", "--rdzv-id=r", "--rdzv-conf=is_host=false",
					"--max-restarts=10", "el.py"},
				Set:      map[string]string{"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"},
				Describe: "elastic torchrun node, 1 to 2 nodes, 1 process(es), rendezvous at am:5000 (r)",
			},
		},
		{
			name: "jax process 0: hosts the coordinator on its held port", framework: jax.Name,
			task: framework.Task{ID: w(0), Cluster: twoWorkers, Port: 100, Argv: []string{"python3", "psum.py"}},
			want: framework.Launch{
				Argv:       []string{"python3", "psum.py"},
				Set:        map[string]string{"JAX_COORDINATOR_ADDRESS": "h0:100", "JAX_NUM_PROCESSES": "2", "JAX_PROCESS_ID": "0"},
				HoldPort:   true,
				PythonHook: jax.Hook,
				Describe:   "JAX process 0 of 2, coordinator h0:100",
			},
		},
		{
			name: "jax process 1", framework: jax.Name,
			task: framework.Task{ID: w(1), Cluster: twoWorkers, Port: 200, Argv: []string{"python3", "psum.py"}},
			want: framework.Launch{
				Argv:       []string{"python3", "psum.py"},
				Set:        map[string]string{"JAX_COORDINATOR_ADDRESS": "h0:100", "JAX_NUM_PROCESSES": "2", "JAX_PROCESS_ID": "1"},
				PythonHook: jax.Hook,
				Describe:   "JAX process 1 of 2, coordinator h0:100",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Lookup(c.framework)
			require.NoError(t, err)
			got, err := f.Launch(c.task)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
			again, _ := f.Launch(c.task)
			require.Equal(t, got, again, "a pure function of the task")
		})
	}
}

func TestElasticLaunchNeedsTheStore(t *testing.T) {
	f, _ := Lookup(pytorch.Name)
	_, err := f.Launch(framework.Task{ID: w(0), Cluster: twoWorkers, Argv: []string{"py", "s.py"}, MinNodes: 1})
	require.ErrorContains(t, err, "an elastic job without the ApplicationMaster's rendezvous store")
}

func TestLaunchRefusesTasksOutsideTheCluster(t *testing.T) {
	for _, name := range []string{pytorch.Name, jax.Name} {
		f, _ := Lookup(name)
		_, err := f.Launch(framework.Task{ID: w(2), Cluster: twoWorkers, Argv: []string{"py", "s.py"}})
		require.ErrorContains(t, err, "worker:2 is not in the cluster (2 workers)", name)
		_, err = f.Launch(framework.Task{ID: taskspec.TaskID{Type: taskspec.Chief}, Cluster: twoWorkers, Argv: []string{"py", "s.py"}})
		require.ErrorContains(t, err, "chief:0 is not a worker task", name)
	}
}

func TestLookup(t *testing.T) {
	f, err := Lookup("")
	require.NoError(t, err)
	require.Equal(t, tensorflow.Name, f.Name(), "no framework named: TensorFlow")
	_, err = Lookup("mxnet")
	require.EqualError(t, err, `unknown framework "mxnet"; expected one of jax, pytorch, tensorflow`)
}

func TestCheckJob(t *testing.T) {
	workers := []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 2}}
	withChief := append([]taskspec.TaskGroup{{Type: taskspec.Chief, Instances: 1}}, workers...)
	cases := []struct {
		job  taskspec.Job
		want string
	}{
		{taskspec.Job{Tasks: withChief, Script: "t.py"}, ""},
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py", ProcsPerNode: 4}, ""},
		{taskspec.Job{Framework: jax.Name, Tasks: workers, Command: "python3"}, ""},
		{taskspec.Job{Framework: "mxnet", Tasks: workers}, `--framework: unknown framework "mxnet"`},
		{taskspec.Job{Framework: pytorch.Name, Tasks: withChief, Script: "t.py"}, "--framework pytorch has no chief tasks; give its tasks as --worker"},
		{taskspec.Job{Framework: jax.Name, Tasks: withChief}, "--framework jax has no chief tasks"},
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Command: "sh"}, "--framework pytorch runs a script under torchrun"},
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py", ProcsPerNode: -1}, "--nproc-per-node -1 is negative"},
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py", ProcsPerNode: 5000}, "--nproc-per-node 5000 is more than 1024"},
		{taskspec.Job{Tasks: workers, Script: "t.py", ProcsPerNode: 2}, "--nproc-per-node is for --framework pytorch"},
		{taskspec.Job{Framework: jax.Name, Tasks: workers, ProcsPerNode: 2}, "--nproc-per-node is for --framework pytorch"},
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py", MinWorkers: 1}, ""},
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py", MinWorkers: 3}, "--min-workers 3: give from 1 to the job's 2 workers"},
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py", MinWorkers: -1}, "--min-workers -1: give from 1 to the job's 2 workers"},
		{taskspec.Job{Tasks: workers, Script: "t.py", MinWorkers: 1}, "--min-workers is for --framework pytorch"},
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py", MinWorkers: 1, Restarts: taskspec.RestartPolicy{Max: 2}}, "drop --max-restarts and --retry-exit-codes"},
	}
	for _, c := range cases {
		err := CheckJob(c.job)
		if c.want == "" {
			require.NoError(t, err, "%+v", c.job)
			continue
		}
		require.ErrorContains(t, err, c.want, "%+v", c.job)
		require.NotContains(t, err.Error(), "\n", "one line")
	}
}

// PyTorch and JAX jobs succeed when every process exits 0; TensorFlow's
// rule stays the job's shape's.
func TestSuccessOf(t *testing.T) {
	workers := []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 2}}
	require.Equal(t, taskspec.SuccessAll, SuccessOf(taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py"}))
	require.Equal(t, taskspec.SuccessAll, SuccessOf(taskspec.Job{Framework: jax.Name, Tasks: workers, Script: "t.py"}))
	require.Equal(t, taskspec.SuccessChief, SuccessOf(taskspec.Job{Tasks: workers, Script: "t.py"}))
	require.Equal(t, taskspec.SuccessChief, SuccessOf(taskspec.Job{Framework: tensorflow.Name, Tasks: workers, Script: "t.py"}))
	require.Equal(t, taskspec.SuccessAll, SuccessOf(taskspec.Job{Tasks: workers, Command: "sh"}))
	require.True(t, strings.HasPrefix(pytorch.TorchRunModule, "torch."))
}
