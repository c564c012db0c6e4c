package appmaster

import (
	"sort"
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// LogDirVar is what YARN replaces with the container's log directory in a
// launch command (Hadoop's ApplicationConstants.LOG_DIR_EXPANSION_VAR).
const LogDirVar = "<LOG_DIR>"

// Environment variables every task sees.
const (
	EnvTask        = "TFYARN_TASK"         // worker:1
	EnvTaskType    = "TFYARN_TASK_TYPE"    // worker
	EnvTaskIndex   = "TFYARN_TASK_INDEX"   // 1
	EnvTaskAttempt = "TFYARN_TASK_ATTEMPT" // 0, then one more per restart
	EnvAppID       = "TFYARN_APP_ID"
)

// TaskLaunchContext is what a task's container runs: the job's command with
// its arguments, output to the container's log directory, the job's
// environment plus the task's identity, and the AM's tokens minus the
// AMRMToken (tokens, from yarn.ContainerTokens).
func TaskLaunchContext(jf JobFile, ln Launch, tokens []byte) *hadoopyarn.ContainerLaunchContextProto {
	env := map[string]string{}
	for k, v := range jf.Job.Env {
		env[k] = v
	}
	env[EnvTask] = ln.Task.String()
	env[EnvTaskType] = string(ln.Task.Type)
	env[EnvTaskIndex] = strconv.Itoa(ln.Task.Index)
	env[EnvTaskAttempt] = strconv.Itoa(ln.Attempt)
	env[EnvAppID] = jf.AppID
	env["HADOOP_USER_NAME"] = jf.User
	argv := append([]string{jf.Job.Command}, jf.Job.Args...)
	return &hadoopyarn.ContainerLaunchContextProto{
		Environment: EnvProto(env),
		Command:     []string{ShellJoin(argv) + " 1>" + LogDirVar + "/stdout 2>" + LogDirVar + "/stderr"},
		Tokens:      tokens,
	}
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
