package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/taskspec"
)

// childEnv is base with the task's variables set: the framework's (its
// Set replaces, its Fill fills in what the user left unset) and the port;
// PYTHONUNBUFFERED only fills in.
func childEnv(base []string, launch framework.Launch, port int) []string {
	env := append([]string(nil), base...)
	for _, k := range sortedKeys(launch.Set) {
		env = setEnv(env, k, launch.Set[k], true)
	}
	env = setEnv(env, contract.EnvTaskPort, strconv.Itoa(port), true)
	for _, k := range sortedKeys(launch.Fill) {
		env = setEnv(env, k, launch.Fill[k], false)
	}
	return setEnv(env, EnvPythonUnbuffered, "1", false)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// writePythonHook writes a framework's Python hook as sitecustomize.py
// into a new directory under dir ("": the working directory), which the
// caller removes once the program ended.
func writePythonHook(dir, source string) (string, error) {
	if dir == "" {
		dir = "."
	}
	d, err := os.MkdirTemp(dir, ".tfyarn-python-")
	if err != nil {
		return "", fmt.Errorf("python hook: %w", err)
	}
	if abs, err := filepath.Abs(d); err == nil {
		d = abs
	}
	if err := os.WriteFile(filepath.Join(d, "sitecustomize.py"), []byte(source), 0o644); err != nil {
		os.RemoveAll(d)
		return "", fmt.Errorf("python hook: %w", err)
	}
	return d, nil
}

// prependPath puts dir first on the path-list variable name.
func prependPath(env []string, name, dir string) []string {
	if v, ok := lookupEnv(env, name); ok && v != "" {
		dir += string(os.PathListSeparator) + v
	}
	return setEnv(env, name, dir, true)
}

// launchOf asks the task's framework (contract.EnvFramework in the
// program's environment; unset: TensorFlow) what the launcher runs.
func launchOf(task taskspec.TaskID, cluster taskspec.ClusterSpec, port int, argv, env []string) (framework.Launch, error) {
	name, _ := lookupEnv(env, contract.EnvFramework)
	f, err := frameworks.Lookup(name)
	if err != nil {
		return framework.Launch{}, err
	}
	procs := 0
	if v, ok := lookupEnv(env, contract.EnvProcsPerNode); ok {
		if procs, err = strconv.Atoi(v); err != nil || procs < 0 {
			return framework.Launch{}, fmt.Errorf("%s=%q is not a number of processes", contract.EnvProcsPerNode, v)
		}
	}
	minWorkers := 0
	if v, ok := lookupEnv(env, contract.EnvMinWorkers); ok {
		if minWorkers, err = strconv.Atoi(v); err != nil || minWorkers < 0 {
			return framework.Launch{}, fmt.Errorf("%s=%q is not a number of workers", contract.EnvMinWorkers, v)
		}
	}
	var lastCall time.Duration
	if v, ok := lookupEnv(env, contract.EnvElasticLastCall); ok {
		seconds, err := strconv.Atoi(v)
		if err != nil || seconds < 1 {
			return framework.Launch{}, fmt.Errorf("%s=%q is not a number of seconds", contract.EnvElasticLastCall, v)
		}
		lastCall = time.Duration(seconds) * time.Second
	}
	service, _ := lookupEnv(env, contract.EnvJobService)
	token, _ := lookupEnv(env, contract.EnvJobServiceToken)
	runID, _ := lookupEnv(env, contract.EnvAppID)
	if r, ok := lookupEnv(env, contract.EnvRestart); ok {
		runID += "-" + r
	}
	return f.Launch(framework.Task{ID: task, Cluster: cluster, Port: port, Argv: argv, Env: env, ProcsPerNode: procs, RunID: runID, MinWorkers: minWorkers, ElasticLastCall: lastCall, JobService: service, JobServiceToken: token})
}

func setEnv(env []string, name, value string, override bool) []string {
	prefix := name + "="
	out := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		} else if !override {
			return env
		}
	}
	return append(out, prefix+value)
}

func lookupEnv(env []string, name string) (string, bool) {
	prefix := name + "="
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], prefix); ok {
			return v, true
		}
	}
	return "", false
}
