package frameworks

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/framework/jax"
	"github.com/tfyarn/tfyarn/internal/framework/lightgbm"
	"github.com/tfyarn/tfyarn/internal/framework/pytorch"
	"github.com/tfyarn/tfyarn/internal/framework/tensorflow"
	"github.com/tfyarn/tfyarn/internal/framework/xgboost"
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
				Serve:    pytorch.RendezvousStore{},
				Describe: "torchrun node of 2, 2 process(es), rendezvous at h0:100 (app_1-0)",
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
			task: framework.Task{ID: w(0), Cluster: twoWorkers, Port: 100, Argv: []string{"py", "el.py"}, RunID: "r", MinWorkers: 1, JobService: "am:5000"},
			want: framework.Launch{
				Argv: []string{"py", "-m", "torch.distributed.run", "--nnodes=1:2", "--nproc-per-node=1",
					"--rdzv-backend=c10d", "--rdzv-endpoint=am:5000", "--rdzv-id=r", "--rdzv-conf=is_host=false",
					"--max-restarts=10", "el.py"},
				Set:               map[string]string{"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"},
				RestartsProcesses: true,
				Describe:          "elastic torchrun node, 1 to 2 nodes, 1 process(es), rendezvous at am:5000 (r)",
			},
		},
		{
			name: "elastic pytorch with --elastic-last-call: torch's last call in its rendezvous conf", framework: pytorch.Name,
			task: framework.Task{ID: w(1), Cluster: twoWorkers, Port: 200, Argv: []string{"py", "el.py"}, RunID: "r", MinWorkers: 1, ElasticLastCall: 5 * time.Second, JobService: "am:5000"},
			want: framework.Launch{
				Argv: []string{"py", "-m", "torch.distributed.run", "--nnodes=1:2", "--nproc-per-node=1",
					"--rdzv-backend=c10d", "--rdzv-endpoint=am:5000", "--rdzv-id=r", "--rdzv-conf=is_host=false,last_call_timeout=5",
					"--max-restarts=10", "el.py"},
				Set:               map[string]string{"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"},
				RestartsProcesses: true,
				Describe:          "elastic torchrun node, 1 to 2 nodes, 1 process(es), rendezvous at am:5000 (r), last call 5s",
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
		{
			name: "xgboost worker 1: the tracker's address, its task and token; the port freed", framework: xgboost.Name,
			task: framework.Task{ID: w(1), Cluster: twoWorkers, Port: 200, Argv: []string{"python3", "xgb.py"}, JobService: "am:5000", JobServiceToken: "0f1e"},
			want: framework.Launch{
				Argv:     []string{"python3", "xgb.py"},
				Set:      map[string]string{"DMLC_TRACKER_URI": "am", "DMLC_TRACKER_PORT": "5000", "DMLC_TASK_ID": "worker:1:0f1e", "DMLC_NUM_WORKER": "2"},
				Describe: "XGBoost worker 1 of 2, tracker at am:5000",
			},
		},
		{
			name: "xgboost worker 0: the same tracker, an IPv6 one", framework: xgboost.Name,
			task: framework.Task{ID: w(0), Cluster: twoWorkers, Port: 100, Argv: []string{"xgb"}, JobService: "[::1]:5000", JobServiceToken: "a5"},
			want: framework.Launch{
				Argv:     []string{"xgb"},
				Set:      map[string]string{"DMLC_TRACKER_URI": "::1", "DMLC_TRACKER_PORT": "5000", "DMLC_TASK_ID": "worker:0:a5", "DMLC_NUM_WORKER": "2"},
				Describe: "XGBoost worker 0 of 2, tracker at [::1]:5000",
			},
		},
		{
			name: "lightgbm worker 0: machines, its own port to listen on, freed before the program", framework: lightgbm.Name,
			task: framework.Task{ID: w(0), Cluster: twoWorkers, Port: 100, Argv: []string{"python3", "lgb.py"}},
			want: framework.Launch{
				Argv:     []string{"python3", "lgb.py"},
				Set:      map[string]string{"LIGHTGBM_MACHINES": "h0:100,h1:200", "LIGHTGBM_LOCAL_LISTEN_PORT": "100", "LIGHTGBM_NUM_MACHINES": "2", "LIGHTGBM_RANK": "0"},
				Describe: "LightGBM machine 0 of 2, listening on port 100",
			},
		},
		{
			name: "lightgbm worker 1", framework: lightgbm.Name,
			task: framework.Task{ID: w(1), Cluster: twoWorkers, Port: 200, Argv: []string{"lgb"}},
			want: framework.Launch{
				Argv:     []string{"lgb"},
				Set:      map[string]string{"LIGHTGBM_MACHINES": "h0:100,h1:200", "LIGHTGBM_LOCAL_LISTEN_PORT": "200", "LIGHTGBM_NUM_MACHINES": "2", "LIGHTGBM_RANK": "1"},
				Describe: "LightGBM machine 1 of 2, listening on port 200",
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
	_, err := f.Launch(framework.Task{ID: w(0), Cluster: twoWorkers, Argv: []string{"py", "s.py"}, MinWorkers: 1})
	require.ErrorContains(t, err, "an elastic job without the ApplicationMaster's rendezvous store")
}

// An XGBoost job's workers need the tracker the ApplicationMaster (or
// run --local) serves; its size is the job's workers.
func TestXGBoostLaunchNeedsTheTracker(t *testing.T) {
	f, _ := Lookup(xgboost.Name)
	_, err := f.Launch(framework.Task{ID: w(0), Cluster: twoWorkers, Argv: []string{"py", "s.py"}})
	require.EqualError(t, err, `xgboost: no tracker address (""): the ApplicationMaster serves it`)
	_, err = f.Launch(framework.Task{ID: w(0), Cluster: twoWorkers, Argv: []string{"py", "s.py"}, JobService: "am:5000"})
	require.EqualError(t, err, "xgboost: no token for the tracker: the ApplicationMaster sends it with the program")
	job := taskspec.Job{Framework: xgboost.Name, Tasks: []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 3}}}
	key := []byte("the job service's key, 32 bytes!")
	require.Equal(t, xgboost.Tracker{Workers: 3, Key: key}, JobServiceOf(job, key))
	require.Nil(t, JobServiceOf(taskspec.Job{Framework: lightgbm.Name, Tasks: job.Tasks}, key))
}

func TestLaunchRefusesTasksOutsideTheCluster(t *testing.T) {
	for _, name := range []string{pytorch.Name, jax.Name, xgboost.Name, lightgbm.Name} {
		f, _ := Lookup(name)
		_, err := f.Launch(framework.Task{ID: w(2), Cluster: twoWorkers, Argv: []string{"py", "s.py"}, JobService: "am:1"})
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
	require.EqualError(t, err, `unknown framework "mxnet"; expected one of jax, lightgbm, pytorch, tensorflow, xgboost`)
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
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py", MinWorkers: 1, ElasticLastCall: 5 * time.Second}, ""},
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py", ElasticLastCall: 5 * time.Second}, "--elastic-last-call is for an elastic job: add --min-workers N"},
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py", MinWorkers: 1, ElasticLastCall: 1500 * time.Millisecond}, "--elastic-last-call 1.5s: give whole seconds from 1s to 10m0s"},
		{taskspec.Job{Framework: pytorch.Name, Tasks: workers, Script: "t.py", MinWorkers: 1, ElasticLastCall: time.Hour}, "--elastic-last-call 1h0m0s: give whole seconds from 1s to 10m0s"},
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

// A job may not set what its own framework sets in its tasks (the value
// would be lost without a word): one line naming the variable, the
// framework and what to do. What another framework sets is the job's.
func TestCheckEnv(t *testing.T) {
	job := func(fw string, minWorkers int, env map[string]string) taskspec.Job {
		return taskspec.Job{Framework: fw, MinWorkers: minWorkers, Env: env, Script: "train.py",
			Tasks: []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 2}}}
	}
	for _, tc := range []struct {
		name string
		job  taskspec.Job
		want string // "" passes
	}{
		{"tensorflow TF_CONFIG", job("", 0, map[string]string{"A": "1", "TF_CONFIG": "{}"}),
			"TF_CONFIG is set by --framework tensorflow in each task (the cluster and the task's place in it); drop it from the environment"},
		{"jax coordinator", job(jax.Name, 0, map[string]string{"JAX_COORDINATOR_ADDRESS": "h:1"}),
			"JAX_COORDINATOR_ADDRESS is set by --framework jax in each task (worker:0's address); drop it from the environment"},
		{"jax process count", job(jax.Name, 0, map[string]string{"JAX_NUM_PROCESSES": "4"}),
			"JAX_NUM_PROCESSES is set by --framework jax in each task (the number of workers); drop it from the environment"},
		{"jax process id, first of two in name order", job(jax.Name, 0, map[string]string{"JAX_PROCESS_ID": "0", "JAX_NUM_PROCESSES": "1"}),
			"JAX_NUM_PROCESSES is set by --framework jax in each task (the number of workers); drop it from the environment"},
		{"pytorch MASTER_ADDR", job(pytorch.Name, 0, map[string]string{"MASTER_ADDR": "h"}),
			"MASTER_ADDR is set by --framework pytorch in each task (torchrun sets it in each process); drop it from the environment"},
		{"pytorch RANK", job(pytorch.Name, 0, map[string]string{"RANK": "0"}),
			"RANK is set by --framework pytorch in each task (torchrun sets it in each process); drop it from the environment"},
		{"pytorch LOCAL_RANK", job(pytorch.Name, 0, map[string]string{"LOCAL_RANK": "0"}), "LOCAL_RANK is set by --framework pytorch"},
		{"pytorch WORLD_SIZE", job(pytorch.Name, 0, map[string]string{"WORLD_SIZE": "2"}), "WORLD_SIZE is set by --framework pytorch"},
		{"pytorch torchrun option default", job(pytorch.Name, 0, map[string]string{"PET_NPROC_PER_NODE": "4"}),
			"PET_NPROC_PER_NODE is set by --framework pytorch in each task (tfyarn passes torchrun --nproc-per-node, tfyarn's own --nproc-per-node); drop it from the environment"},
		{"elastic pytorch store switch", job(pytorch.Name, 1, map[string]string{"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "0"}),
			"TORCH_DISABLE_SHARE_RDZV_TCP_STORE is set by --framework pytorch in each task (an elastic job's agents need a new store each round); drop it from the environment"},
		// What torchrun keeps, and what only an elastic job sets.
		{"pytorch keeps OMP_NUM_THREADS and NCCL's switch", job(pytorch.Name, 0, map[string]string{"OMP_NUM_THREADS": "4", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "0", "CUDA_VISIBLE_DEVICES": "0"}), ""},
		{"non-elastic pytorch: store switch is the job's", job(pytorch.Name, 0, map[string]string{"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"}), ""},
		// Only the job's own framework counts.
		{"pytorch job's TF_CONFIG", job(pytorch.Name, 0, map[string]string{"TF_CONFIG": "{}"}), ""},
		{"jax job's RANK", job(jax.Name, 0, map[string]string{"RANK": "0", "TF_CONFIG": "{}"}), ""},
		{"tensorflow job's JAX and torch variables", job(tensorflow.Name, 0, map[string]string{"JAX_PROCESS_ID": "0", "MASTER_PORT": "1", "RANK": "0"}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckEnv(tc.job, tc.job.Env, "")
			require.Equal(t, err, CheckJob(tc.job), "CheckJob checks the environment too")
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
			var ve *taskspec.ValidationError
			require.ErrorAs(t, err, &ve, "a validation error: exit 2")
			require.NotContains(t, err.Error(), "\n")
		})
	}
	err := CheckEnv(job(jax.Name, 0, nil), map[string]string{"JAX_PROCESS_ID": "x"}, "--secret-env")
	require.EqualError(t, err, "--secret-env JAX_PROCESS_ID is set by --framework jax in each task (the worker's index); pick another name")
}

// Every variable a framework's launch sets is one it reserves: otherwise
// the job's value of it would be replaced without a word.
func TestLaunchSetsOnlyReserved(t *testing.T) {
	py := []string{"python3", "train.py"}
	for _, tc := range []struct {
		job  taskspec.Job
		task framework.Task
	}{
		{taskspec.Job{}, framework.Task{ID: w(0), Cluster: twoWorkers, Port: 100, Argv: py}},
		{taskspec.Job{Framework: jax.Name}, framework.Task{ID: w(1), Cluster: twoWorkers, Port: 200, Argv: py}},
		{taskspec.Job{Framework: pytorch.Name}, framework.Task{ID: w(0), Cluster: twoWorkers, Port: 100, Argv: py, RunID: "r"}},
		{taskspec.Job{Framework: pytorch.Name, MinWorkers: 1}, framework.Task{ID: w(1), Cluster: twoWorkers, Port: 200, Argv: py, RunID: "r", MinWorkers: 1, JobService: "am:1"}},
		{taskspec.Job{Framework: xgboost.Name}, framework.Task{ID: w(1), Cluster: twoWorkers, Port: 200, Argv: py, JobService: "am:1", JobServiceToken: "t"}},
		{taskspec.Job{Framework: lightgbm.Name}, framework.Task{ID: w(0), Cluster: twoWorkers, Port: 100, Argv: py}},
	} {
		f, err := Lookup(tc.job.Framework)
		require.NoError(t, err)
		l, err := f.Launch(tc.task)
		require.NoError(t, err)
		reserved := f.Reserved(tc.job)
		for k := range l.Set {
			require.Contains(t, reserved, k, "%s sets %s", f.Name(), k)
		}
	}
	require.NotEmpty(t, all[jax.Name].Reserved(taskspec.Job{}), "jax sets its variables")
}
