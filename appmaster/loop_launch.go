package appmaster

import (
	"github.com/tfyarn/tfyarn/appmaster/core"
	"sort"
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/contract"
	"github.com/tfyarn/tfyarn/rendezvous"
	"github.com/tfyarn/tfyarn/security"
	"github.com/tfyarn/tfyarn/yarn"
	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// TaskLaunchContext is what a task's container runs: the task launcher
// (`./tfyarn task`, the shipped binary) around the job's command and its
// arguments, output to the container's log directory, the job's environment
// plus the task's identity and the AM's rendezvous address, the job's task
// resources, and the tokens the AM passes on (tokens: its credentials minus
// the AMRMToken, plus the rendezvous secret).
func TaskLaunchContext(jf contract.JobFile, ln core.Launch, amAddress string, tokens []byte) *hadoopyarn.ContainerLaunchContextProto {
	env := map[string]string{}
	for k, v := range jf.Job.Env {
		env[k] = v
	}
	env[contract.EnvTask] = ln.Task.String()
	env[contract.EnvTaskType] = string(ln.Task.Type)
	env[contract.EnvTaskIndex] = strconv.Itoa(ln.Task.Index)
	env[contract.EnvTaskAttempt] = strconv.Itoa(ln.Attempt)
	env[contract.EnvRestart] = strconv.Itoa(ln.Restart)
	if ln.Port != 0 {
		env[contract.EnvRetakePort] = strconv.Itoa(ln.Port)
	}
	env[contract.EnvAppID] = jf.AppID
	env[contract.EnvAMAddress] = amAddress
	env["HADOOP_USER_NAME"] = jf.User
	if jf.PythonEnv != "" {
		env[contract.EnvPythonEnv] = jf.PythonEnv
	}
	if len(jf.PythonPath) > 0 {
		env[contract.EnvPythonPath] = strings.Join(jf.PythonPath, ":")
	}
	argv := append([]string{"./" + contract.BinaryName, "task", "--"}, jf.TaskCommand(ln.Task.Type)...)
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
		Environment:    yarn.EnvProto(env),
		Command:        []string{LaunchCommand(argv) + " 1>" + yarn.LogDirVar + "/stdout 2>" + yarn.LogDirVar + "/stderr"},
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
	// The status key is the owner's proof towards the AM's status page: a
	// task's program (or whoever reads its token file) has no use for it.
	c.RemoveSecret(contract.StatusKeyAlias)
	rendezvous.AddSecret(c, secret)
	return c.Marshal()
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
