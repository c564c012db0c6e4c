package appmaster

import (
	"sort"
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/rendezvous"
	"github.com/tfyarn/tfyarn/security"
	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// LogDirVar is what YARN replaces with the container's log directory in a
// launch command (Hadoop's ApplicationConstants.LOG_DIR_EXPANSION_VAR).
const LogDirVar = "<LOG_DIR>"

// Environment variables every task sees.
const (
	EnvTask        = rendezvous.EnvTask    // worker:1
	EnvTaskType    = "TFYARN_TASK_TYPE"    // worker
	EnvTaskIndex   = "TFYARN_TASK_INDEX"   // 1
	EnvTaskAttempt = "TFYARN_TASK_ATTEMPT" // 0, then one more per restart
	EnvAppID       = "TFYARN_APP_ID"
	// EnvPythonEnv and EnvPythonPath tell the task launcher where the job's
	// Python environment and source directories are (executor.EnvPythonEnv,
	// executor.EnvPythonPath).
	EnvPythonEnv  = "TFYARN_PYTHON_ENV"
	EnvPythonPath = "TFYARN_PYTHONPATH"
)

// TaskLaunchContext is what a task's container runs: the task launcher
// (`./tfyarn task`, the shipped binary) around the job's command and its
// arguments, output to the container's log directory, the job's environment
// plus the task's identity and the AM's rendezvous address, the job's task
// resources, and the tokens the AM passes on (tokens: its credentials minus
// the AMRMToken, plus the rendezvous secret).
func TaskLaunchContext(jf JobFile, ln Launch, amAddress string, tokens []byte) *hadoopyarn.ContainerLaunchContextProto {
	env := map[string]string{}
	for k, v := range jf.Job.Env {
		env[k] = v
	}
	env[EnvTask] = ln.Task.String()
	env[EnvTaskType] = string(ln.Task.Type)
	env[EnvTaskIndex] = strconv.Itoa(ln.Task.Index)
	env[EnvTaskAttempt] = strconv.Itoa(ln.Attempt)
	env[EnvAppID] = jf.AppID
	env[rendezvous.EnvAMAddress] = amAddress
	env["HADOOP_USER_NAME"] = jf.User
	if jf.PythonEnv != "" {
		env[EnvPythonEnv] = jf.PythonEnv
	}
	if len(jf.PythonPath) > 0 {
		env[EnvPythonPath] = strings.Join(jf.PythonPath, ":")
	}
	argv := append([]string{"./" + BinaryName, "task", "--", jf.Job.Command}, jf.Job.Args...)
	names := make([]string, 0, len(jf.TaskResources))
	for name := range jf.TaskResources {
		names = append(names, name)
	}
	sort.Strings(names)
	res := make([]*hadoopyarn.StringLocalResourceMapProto, len(names))
	for i, name := range names {
		res[i] = &hadoopyarn.StringLocalResourceMapProto{Key: proto.String(name), Value: jf.TaskResources[name].Proto()}
	}
	return &hadoopyarn.ContainerLaunchContextProto{
		LocalResources: res,
		Environment:    EnvProto(env),
		Command:        []string{LaunchCommand(argv) + " 1>" + LogDirVar + "/stdout 2>" + LogDirVar + "/stderr"},
		Tokens:         tokens,
	}
}

// TaskTokens is what task containers get as credentials: the AM's minus the
// AMRMToken, which would let a task impersonate the AM towards the RM, plus
// the rendezvous secret. YARN writes them to a file only the container's
// user can read; the secret is on no command line and in no environment.
func TaskTokens(amCreds *security.Credentials, secret []byte) []byte {
	if amCreds == nil {
		amCreds = security.NewCredentials()
	}
	c := amCreds.Without(security.KindAMRMToken)
	rendezvous.AddSecret(c, secret)
	return c.Marshal()
}

// EnvProto renders an environment, sorted so launch contexts compare.
func EnvProto(env map[string]string) []*hadoopyarn.StringStringMapProto {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*hadoopyarn.StringStringMapProto, len(keys))
	for i, k := range keys {
		out[i] = &hadoopyarn.StringStringMapProto{Key: proto.String(k), Value: proto.String(env[k])}
	}
	return out
}

// LaunchCommand is argv as a container's command. The NodeManager's launch
// script runs it as `exec /bin/bash -c "COMMAND"`, pasted between double
// quotes without escaping (Hadoop's UnixShellScriptBuilder), so the $, `,
// \ and " of the quoted command are escaped for that outer layer: without
// it, a user's "$TF_CONFIG" would be expanded by the launch script, before
// the task launcher has set it.
func LaunchCommand(argv []string) string {
	return dqEscaper.Replace(ShellJoin(argv))
}

var dqEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`")

// ShellJoin quotes argv for the bash that YARN's launch script hands the
// command to, so arguments arrive exactly as the user typed them.
func ShellJoin(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = shellQuote(a)
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
