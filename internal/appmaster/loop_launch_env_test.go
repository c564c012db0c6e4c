package appmaster

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// A job with an environment, a source directory, a file and an archive:
// every task gets them all under their link names, the ARCHIVEs typed so,
// and the launcher is told which is the environment and what goes on
// PYTHONPATH.
func TestTaskLaunchContextShipsTheEnvironment(t *testing.T) {
	res := func(p string) hdfs.Resource {
		return hdfs.Resource{Scheme: "hdfs", Host: "nn", Port: 8020, Path: p, Size: 1, Timestamp: 2,
			Type: hdfs.ResourceType(p), Visibility: hadoopyarn.LocalResourceVisibilityProto_PRIVATE}
	}
	jf := contract.JobFile{AppID: "application_1_0001", User: "alice",
		TaskResources: map[string]hdfs.Resource{
			contract.BinaryName: res("/c/1/tfyarn"),
			"env":               res("/c/2/env.tar.gz"),
			"src":               res("/c/3/src.tar.gz"),
			"data.csv":          res("/c/4/data.csv"),
			"vocab":             res("/c/5/vocab.zip"),
		},
		PythonEnv: "env", PythonPath: []string{"src"},
		Job: taskspec.Job{Command: "env/bin/python", Args: []string{"train.py"}}}
	clc := TaskLaunchContext(jf, core.Launch{Task: taskspec.TaskID{Type: taskspec.Worker, Index: 0}}, "am:1", nil)
	require.Equal(t, []string{`./tfyarn task 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr`}, clc.Command)
	env := map[string]string{}
	for _, kv := range clc.Environment {
		env[kv.GetKey()] = kv.GetValue()
	}
	require.Equal(t, "env", env[contract.EnvPythonEnv])
	require.Equal(t, "src", env[contract.EnvPythonPath])
	types := map[string]hadoopyarn.LocalResourceTypeProto{}
	for _, r := range clc.LocalResources {
		types[r.GetKey()] = r.GetValue().GetType()
	}
	require.Equal(t, map[string]hadoopyarn.LocalResourceTypeProto{
		contract.BinaryName: hadoopyarn.LocalResourceTypeProto_FILE,
		"data.csv":          hadoopyarn.LocalResourceTypeProto_FILE,
		"env":               hadoopyarn.LocalResourceTypeProto_ARCHIVE,
		"src":               hadoopyarn.LocalResourceTypeProto_ARCHIVE,
		"vocab":             hadoopyarn.LocalResourceTypeProto_ARCHIVE,
	}, types)

	// Without an environment the launcher is told nothing.
	jf.PythonEnv, jf.PythonPath = "", nil
	clc = TaskLaunchContext(jf, core.Launch{Task: taskspec.TaskID{Type: taskspec.Worker, Index: 0}}, "am:1", nil)
	for _, kv := range clc.Environment {
		require.NotContains(t, []string{contract.EnvPythonEnv, contract.EnvPythonPath}, kv.GetKey())
	}
}

func TestJobFileRoundTripWithPythonEnv(t *testing.T) {
	g, _ := taskspec.ParseSpec(taskspec.Worker, "2x1c")
	jf := contract.NewJobFile("application_1_0001", "alice", "/s", taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "env/bin/python"}, nil)
	jf.TaskResources = map[string]hdfs.Resource{
		contract.BinaryName: {Scheme: "hdfs", Host: "nn", Port: 8020, Path: "/c/tfyarn", Size: 1, Timestamp: 2},
		"env":               {Scheme: "hdfs", Host: "nn", Port: 8020, Path: "/c/env.tar.gz", Size: 1, Timestamp: 2, Type: hadoopyarn.LocalResourceTypeProto_ARCHIVE},
	}
	jf.PythonEnv = "env"
	data, err := jf.Marshal()
	require.NoError(t, err)
	back, err := contract.ParseJobFile(data)
	require.NoError(t, err)
	require.Equal(t, jf, back)

	jf.PythonPath = []string{"src"}
	data, err = jf.Marshal()
	require.NoError(t, err)
	_, err = contract.ParseJobFile(data)
	require.EqualError(t, err, `job file names "src" as a Python directory but ships no archive of that name`)
}

// --image: a task type's containers ask for YARN's Docker runtime with their image, host
// networking and the job's mounts; a type without an image stays on the default runtime.
func TestTaskLaunchContextAsksForTheDockerRuntime(t *testing.T) {
	jf := contract.JobFile{AppID: "application_1_0001", User: "alice", Job: taskspec.Job{Command: "true",
		Images: map[string]string{"worker": "tfyarn.test/img:1"},
		Mounts: []taskspec.Mount{{Src: "/data", Dst: "/data", ReadOnly: true}, {Src: "/scratch", Dst: "/s"}}}}
	envOf := func(typ taskspec.TaskType) map[string]string {
		env := map[string]string{}
		for _, kv := range TaskLaunchContext(jf, core.Launch{Task: taskspec.TaskID{Type: typ}}, "am:1", nil).Environment {
			env[kv.GetKey()] = kv.GetValue()
		}
		return env
	}
	w := envOf(taskspec.Worker)
	require.Equal(t, "docker", w["YARN_CONTAINER_RUNTIME_TYPE"])
	require.Equal(t, "tfyarn.test/img:1", w["YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"])
	require.Equal(t, "host", w["YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK"])
	require.Equal(t, "/data:/data:ro,/scratch:/s:rw", w["YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"])
	ps := envOf(taskspec.PS)
	for _, k := range []string{"YARN_CONTAINER_RUNTIME_TYPE", "YARN_CONTAINER_RUNTIME_DOCKER_IMAGE", "YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"} {
		require.NotContains(t, ps, k)
	}
}
