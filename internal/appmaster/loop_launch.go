package appmaster

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
	"google.golang.org/protobuf/proto"
)

// TaskLaunchContext is what a task's container runs: the task launcher
// (`./tfyarn task`, the shipped binary), output to the container's log
// directory, the task's identity and the AM's rendezvous address in the
// environment, the job's task resources, and the tokens the AM passes on
// (tokens: its credentials minus the AMRMToken, plus the container's
// rendezvous key).
//
// The job's command, arguments and environment are not in it: the
// NodeManager rewrites {{ }}, <CPS> and <LOG_DIR> in commands and
// environment values and pastes both into a bash script between double
// quotes, so an argument could run commands. The launcher gets them from
// the AM with the cluster spec instead (TaskProgram), and the launch
// context holds only what tfyarn generates.
func TaskLaunchContext(jf contract.JobFile, ln core.Launch, amAddress string, tokens []byte) *hadoopyarn.ContainerLaunchContextProto {
	env := map[string]string{}
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
	if jf.Job.Framework != "" {
		env[contract.EnvFramework] = jf.Job.Framework
	}
	if jf.Job.FailOnLog != "" {
		env[contract.EnvFailOnLog] = jf.Job.FailOnLog
	}
	if jf.Job.ExcludeNodeOnLog != "" {
		env[contract.EnvExcludeNodeOnLog] = jf.Job.ExcludeNodeOnLog
	}
	if jf.Job.ProcsPerNode > 0 {
		env[contract.EnvProcsPerNode] = strconv.Itoa(jf.Job.ProcsPerNode)
	}
	if jf.Job.MinWorkers > 0 {
		env[contract.EnvMinWorkers] = strconv.Itoa(jf.Job.MinWorkers)
	}
	if s := int(jf.Job.ElasticLastCall / time.Second); s > 0 {
		env[contract.EnvElasticLastCall] = strconv.Itoa(s)
	}
	if jf.PythonEnv != "" {
		env[contract.EnvPythonEnv] = jf.PythonEnv
	}
	if len(jf.PythonEnvLayers) > 0 {
		env[contract.EnvPythonEnvLayers] = strings.Join(jf.PythonEnvLayers, ":")
	}
	if len(jf.PythonPath) > 0 {
		env[contract.EnvPythonPath] = strings.Join(jf.PythonPath, ":")
	}
	if img := jf.Job.ImageFor(ln.Task.Type); img != "" {
		// YARN's Docker runtime (--image): host networking, so that the port the launcher
		// announces is the node's; the launcher, localized as always, runs inside the image.
		env[yarn.EnvRuntimeType] = "docker"
		env[yarn.EnvDockerImage] = img
		env[yarn.EnvDockerNetwork] = "host"
		if len(jf.Job.Mounts) > 0 {
			ms := make([]string, len(jf.Job.Mounts))
			for i, m := range jf.Job.Mounts {
				ms[i] = m.String()
			}
			env[yarn.EnvDockerMounts] = strings.Join(ms, ",")
		}
	}
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
		Command:        []string{"./" + contract.BinaryName + " task 1>" + yarn.LogDirVar + "/stdout 2>" + yarn.LogDirVar + "/stderr"},
		Tokens:         tokens,
	}
}

// TaskProgram is what the launcher of a task runs (rendezvous.Program):
// the task type's command and the job's environment, byte for byte, with
// the secret one (--secret-env, takeSecretEnv) added, and, with serviceKey
// (the job has a side service), the task's own token for it
// (contract.EnvJobServiceToken), which only that task gets.
func TaskProgram(jf contract.JobFile, secretEnv map[string]string, serviceKey []byte) func(taskspec.TaskID) (rendezvous.Program, bool) {
	env := jf.Job.Env
	if len(secretEnv) > 0 {
		env = make(map[string]string, len(jf.Job.Env)+len(secretEnv))
		for k, v := range jf.Job.Env {
			env[k] = v
		}
		for k, v := range secretEnv {
			env[k] = v
		}
	}
	return func(id taskspec.TaskID) (rendezvous.Program, bool) {
		p := rendezvous.Program{Argv: jf.TaskCommand(id.Type), Env: env}
		if serviceKey != nil {
			p.Env = make(map[string]string, len(env)+1)
			for k, v := range env {
				p.Env[k] = v
			}
			p.Env[contract.EnvJobServiceToken] = framework.JobServiceToken(serviceKey, id)
		}
		return p, true
	}
}

// takeSecretEnv removes the --secret-env variables from creds (the AM's,
// which every task's are made of) and returns them by name.
func takeSecretEnv(creds *security.Credentials) map[string]string {
	if creds == nil {
		return nil
	}
	var out map[string]string
	for _, alias := range creds.SecretAliases() {
		name, ok := strings.CutPrefix(alias, contract.SecretEnvAliasPrefix)
		if !ok || !taskspec.ValidEnvName(name) {
			continue
		}
		v, _ := creds.Secret(alias)
		creds.RemoveSecret(alias)
		if out == nil {
			out = map[string]string{}
		}
		out[name] = string(v)
	}
	return out
}

// TaskTokens is what a task container gets as credentials: the AM's minus
// the AMRMToken, which would let a task impersonate the AM towards the RM,
// plus key, the container's own rendezvous key (rendezvous.ContainerKey:
// never the job's secret, so a launcher can sign only as its container).
// YARN writes them to a file only the container's user can read; the key
// is on no command line and in no environment.
func TaskTokens(amCreds *security.Credentials, key []byte) []byte {
	if amCreds == nil {
		amCreds = security.NewCredentials()
	}
	c := amCreds.Without(security.KindAMRMToken)
	// The status key is the owner's proof towards the AM's status page: a
	// task's program (or whoever reads its token file) has no use for it.
	c.RemoveSecret(contract.StatusKeyAlias)
	rendezvous.AddSecret(c, key)
	return c.Marshal()
}

// ShellJoin quotes argv the way a shell would take it, for showing a
// command line (the web UI, the history).
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
