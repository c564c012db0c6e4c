package appmaster

import (
	"context"
	"fmt"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/buildinfo"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// AMOptions configure RunAM.
type AMOptions struct {
	JobFile string    // path of the job description (contract.JobFileName in the working directory)
	Log     io.Writer // where the AM logs, one line per event (its stderr)
	Getenv  func(string) string
}

// RunAM is the ApplicationMaster process: it reads the job file and the
// container's credentials, registers, runs the job through Loop, removes
// the staging directory and unregisters with the job's final status. A
// cancelled ctx (SIGTERM) ends the job KILLED, still unregistering. The
// error means the AM could not register or unregister; the job's own
// failure is reported to YARN, not here.
func RunAM(ctx context.Context, opts AMOptions) (LoopResult, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	logf := amLogf(opts.Log)
	jf, err := readJobFile(opts.JobFile)
	if err != nil {
		return LoopResult{}, err
	}
	logf("%s", buildinfo.Current())
	logf("%s: %d tasks (%s) as %s in %s", jf.AppID, jf.Job.TaskCount(), groupSpecs(jf), jf.User, opts.Getenv(contract.EnvContainerID))
	creds, secretEnv, sec, err := loadAMCredentials(ctx, jf, opts.Getenv)
	if err != nil {
		return LoopResult{}, err
	}
	conf := jf.Config()
	policy, err := frameworks.PolicyFor(jf.Success, jf.Job)
	if err != nil {
		return LoopResult{}, err
	}
	secret, serviceKey, err := amKeys(creds, jf.Job)
	if err != nil {
		return LoopResult{}, err
	}
	host := opts.Getenv(contract.EnvNMHost)
	adopting, _ := strconv.Atoi(opts.Getenv(contract.EnvAMAttempts))
	attempt := amattempt.AttemptOf(opts.Getenv(contract.EnvContainerID))
	store := sec.stateStore()
	saved := loadPreviousAttempt(ctx, store, adopting, attempt, logf)
	web, err := WebAccessFor(conf, jf.AppID, statusKey(creds, logf))
	if err != nil {
		return LoopResult{}, fmt.Errorf("appmaster: the ResourceManager's web proxy: %w", err)
	}
	rcfg := RendezvousConfig{
		AppID: jf.AppID, User: jf.User, Job: jf.Job, Secret: secret, Host: host,
		RegistrationTimeout: jf.RendezvousTimeout, Log: opts.Log, Logf: logf,
		Listen: saved.ReuseListen(host), Web: web, Program: TaskProgram(jf, secretEnv, serviceKey), SaveResult: sec.saveResult, FreshCredentials: sec.refreshes(),
	}
	rv, err := startRendezvousOnPreviousAddress(rcfg, saved, logf)
	if err != nil {
		return LoopResult{}, err
	}
	// A watching client gets a moment to read the final task table.
	defer rv.Close(3 * time.Second)
	tracking := startTracking(ctx, jf, secretEnv, opts.Getenv, web.ProxyURL, attempt, logf)
	logf("rendezvous and status page at %s (success rule %q)", rv.Address(), orDefault(string(jf.Success), string(frameworks.SuccessOf(jf.Job))))
	taskEnv := map[string]string{}
	if err := serveJobServiceOf(ctx, jf, serviceKey, host, taskEnv, logf); err != nil {
		return LoopResult{}, err
	}
	checkpointEnv(jf, taskEnv)
	rm, nm, err := dialRMAndNM(conf, creds)
	if err != nil {
		return LoopResult{}, err
	}
	defer rm.Close()
	defer nm.Close()
	refreshCtx, stopRefresh := context.WithCancel(ctx)
	defer stopRefresh()
	go sec.refreshTokens(refreshCtx, rv.PublishCredentials, logf)

	observe, adopt := rv.Observe, func(context.Context) []amattempt.Task { return nil }
	if adopting > 1 {
		// Every task's launcher listens for a later attempt's call.
		taskEnv[contract.EnvAMControl] = strconv.Itoa(max(attempt, 1))
		observe, adopt = laterAttempts(refreshCtx, rv, store, saved, secret, attempt, logf)
	}
	res, err := Loop(ctx, LoopConfig{
		Job:               jf.Job,
		Policy:            policy,
		AllocTimeout:      jf.AllocTimeout,
		ClusterOffers:     jf.ClusterOffers,
		LargestNodeMiB:    jf.LargestNodeMiB,
		QueueDefaultLabel: jf.QueueDefaultLabel,
		PreemptionWait:    PreemptionWait(conf),
		Python:            pythonFacts(jf),
		RM:                rm,
		NM:                nm,
		Host:              host,
		RPCPort:           int32(rv.Port()),
		TrackingURL:       rv.TrackingURL(),
		Launchers:         rv,
		Progress:          rv.JobProgress,
		Observe:           observe,
		Adopt:             adopt,
		Attempt:           attempt,
		Attempts:          adopting,
		Resume:            resumedRecord(saved),
		NodeRacks:         clusterRacks(jf),
		RefusalReason:     imageRefusalReason(jf),
		LaunchContext:     launchContextFor(jf, rv, sec, secret, taskEnv),
		BeforeUnregister: func(ctx context.Context, f core.Finish) {
			stopRefresh()
			writeHistoryAndRemoveStaging(ctx, sec, rv, jf, f, tracking, logf)
		},
		Logf: logf,
	})
	logStartupAndMemory(opts.Getenv(contract.EnvAppSubmitTime), jf, res, logf)
	return res, err
}

// amLogf logs to w one line per event, as the AM's log has them.
func amLogf(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(w, "%s tfyarn am: %s\n", time.Now().Format("2006-01-02 15:04:05.000"), fmt.Sprintf(format, args...))
	}
}

// loadAMCredentials loads the AM container's credentials, drops tfyarn's
// secrets from its token file, takes the --secret-env values out of them, and
// sets up what the AM does with them (amSecurity).
func loadAMCredentials(ctx context.Context, jf contract.JobFile, getenv func(string) string) (creds *security.Credentials, secretEnv map[string]string, sec *amSecurity, err error) {
	creds, err = yarn.LoadContainerCredentials()
	if err != nil {
		return nil, nil, nil, err
	}
	// Every secret tfyarn put into the AM's credentials (the rendezvous
	// secret, the status key, the keytab, --secret-env values) stays in this
	// process's memory from here on, not in the token file in the AM's
	// container directory, which the job's tasks on this node (adopted ones
	// of an earlier attempt too) could read: one rewrite, before anything
	// else runs.
	if err := dropSecretsFromTokenFile(getenv(contract.EnvTokenFile), amSecretAliases(jf, creds)...); err != nil {
		return nil, nil, nil, err
	}
	// --secret-env: taken out of the credentials every task's are made of.
	secretEnv = takeSecretEnv(creds)
	sec, err = newAMSecurity(ctx, jf, creds, ".", getenv)
	if err != nil {
		return nil, nil, nil, err
	}
	return creds, secretEnv, sec, nil
}

// amKeys are this attempt's keys: the rendezvous secret (rendezvousSecret)
// and the key of the job's side service (jobServiceKey, nil for none).
func amKeys(creds *security.Credentials, job taskspec.Job) (secret, serviceKey []byte, err error) {
	if secret, err = rendezvousSecret(creds); err != nil {
		return nil, nil, err
	}
	serviceKey, err = jobServiceKey(job)
	return secret, serviceKey, err
}

// rendezvousSecret is the secret the launchers sign their calls with. With
// --am-attempts the client put it in the application's credentials: every
// attempt shares it (adopt.go); else this attempt makes one.
func rendezvousSecret(creds *security.Credentials) ([]byte, error) {
	secret, err := rendezvous.SecretFrom(creds)
	if err != nil {
		if secret, err = rendezvous.NewSecret(); err != nil {
			return nil, err
		}
	}
	return secret, nil
}

// serveJobServiceOf serves the job's framework's service for the whole job,
// if it has one, with key, here where it outlives any task, and hands its
// address to the tasks (taskEnv).
func serveJobServiceOf(ctx context.Context, jf contract.JobFile, key []byte, host string, taskEnv map[string]string, logf func(string, ...any)) error {
	svc := frameworks.JobServiceOf(jf.Job, key)
	if svc == nil {
		return nil
	}
	addr, err := serveJobService(ctx, host, svc, logf)
	if err != nil {
		return err
	}
	taskEnv[contract.EnvJobService] = addr
	logf("the job's side service (%s) at %s", frameworks.NameOf(jf.Job), addr)
	return nil
}

// dialRMAndNM makes the AM's clients of the ResourceManager and of the
// NodeManagers.
func dialRMAndNM(conf *hadoopconf.Config, creds *security.Credentials) (*yarn.AMRMClient, *yarn.ContainerManager, error) {
	rm, err := yarn.NewAMRMClient(conf, creds, yarn.AMOptions{})
	if err != nil {
		return nil, nil, err
	}
	protection, err := conf.RPCProtection()
	if err != nil {
		rm.Close()
		return nil, nil, err
	}
	return rm, yarn.NewContainerManager(rm, yarn.NMOptions{Protection: protection}), nil
}

// launchContextFor is how the loop launches a task: its container's launch
// context, with the environment every task gets (taskEnv).
func launchContextFor(jf contract.JobFile, rv *TaskRendezvous, sec *amSecurity, secret []byte, taskEnv map[string]string) func(core.Launch) *hadoopyarn.ContainerLaunchContextProto {
	return func(ln core.Launch) *hadoopyarn.ContainerLaunchContextProto {
		clc := TaskLaunchContext(jf, ln, rv.Address(), sec.taskTokens(rendezvous.ContainerKey(secret, ln.Container.ID)))
		if len(taskEnv) > 0 {
			clc.Environment = append(clc.Environment, yarn.EnvProto(taskEnv)...)
		}
		return clc
	}
}

// readJobFile reads and parses the job file the client wrote.
func readJobFile(path string) (contract.JobFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return contract.JobFile{}, fmt.Errorf("appmaster: %w", err)
	}
	jf, err := contract.ParseJobFile(data)
	if err != nil {
		return contract.JobFile{}, fmt.Errorf("appmaster: %w", err)
	}
	return jf, nil
}

// loadPreviousAttempt reads the task table a previous attempt saved, when
// this is a later attempt of a job with --am-attempts; nil when there is none
// (nothing read: nothing adopted).
func loadPreviousAttempt(ctx context.Context, store amattempt.Store, adopting, attempt int, logf func(string, ...any)) *amattempt.State {
	var saved *amattempt.State
	if adopting > 1 && attempt > 1 {
		var err error
		if saved, err = store.Load(ctx); err != nil {
			logf("reading the previous attempt's task table: %v", err)
		}
	}
	return saved
}

// startRendezvousOnPreviousAddress starts the rendezvous on the previous
// attempt's address when rcfg names one (its launchers call there), else, or
// when that is taken, on any port.
func startRendezvousOnPreviousAddress(rcfg RendezvousConfig, saved *amattempt.State, logf func(string, ...any)) (*TaskRendezvous, error) {
	rv, err := StartRendezvous(rcfg)
	if err != nil && rcfg.Listen != "" {
		logf("the previous attempt's address %s is taken (%v): any port", saved.AM, err)
		rcfg.Listen = ""
		rv, err = StartRendezvous(rcfg)
	}
	return rv, err
}

// laterAttempts is what a job with --am-attempts does for the attempts after
// this one and from the one before: observe also saves the task table for the
// next attempt; adopt hands the loop the previous attempt's tasks (saved),
// whose launchers are told this attempt's address.
func laterAttempts(ctx context.Context, rv *TaskRendezvous, store amattempt.Store, saved *amattempt.State, secret []byte, attempt int, logf func(string, ...any)) (observe func(Snapshot), adopt func(context.Context) []amattempt.Task) {
	adopt = func(context.Context) []amattempt.Task { return nil }
	saver := amattempt.NewSaver(ctx, store.Save, logf)
	observe = func(s Snapshot) {
		rv.Observe(s)
		if st, ok := stateToSave(s, rv.Address(), rv.controlPorts()); ok {
			saver.Offer(st)
		}
	}
	if saved != nil {
		adopt = func(context.Context) []amattempt.Task { return saved.Tasks }
		// Each adopted task's launcher hears this attempt's address on
		// its control port once the board has let it in.
		rv.AnnounceAdopted(saved.Tasks, func(t amattempt.Task) {
			if err := amattempt.Announce(ctx, secret, attempt, rv.Address(), t); err != nil {
				logf("telling %s's launcher where this attempt runs: %v", t.Task, err)
				return
			}
			logf("told %s's launcher (control port %s:%d) that this attempt runs at %s", t.Task, t.Host, t.Control, rv.Address())
		})
	}
	return observe, adopt
}

// writeHistoryAndRemoveStaging is what the AM does before it unregisters:
// write the job's history, log its end into its MLflow run, and remove the
// staging directory, unless the job is handed over to the next attempt
// (which goes on in the same run).
func writeHistoryAndRemoveStaging(ctx context.Context, sec *amSecurity, rv *TaskRendezvous, jf contract.JobFile, f core.Finish, tracking *jobTracking, logf func(string, ...any)) {
	if err := sec.writeHistory(ctx, rv.FinalReport()); err != nil {
		logf("writing the job's history: %v", err)
	} else {
		logf("history written to %s", hdfs.HistoryPath(jf.User, jf.AppID))
	}
	if !f.HandOver {
		tracking.end(ctx, rv.FinalReport(), logf)
	}
	if f.HandOver {
		logf("keeping the staging directory for the next attempt")
		return
	}
	if err := sec.removeStaging(ctx); err != nil {
		logf("removing the staging directory: %v", err)
	}
}

// logStartupAndMemory logs, as the AM ends, how long after the submission
// (submitTime, milliseconds since the epoch) every task had started, and the
// AM's memory.
func logStartupAndMemory(submitTime string, jf contract.JobFile, res LoopResult, logf func(string, ...any)) {
	if ms, perr := strconv.ParseInt(submitTime, 10, 64); perr == nil && !res.AllStartedAt.IsZero() {
		logf("all %d tasks started %.3fs after submission", jf.Job.TaskCount(), res.AllStartedAt.Sub(time.UnixMilli(ms)).Seconds())
	}
	mem := ReadMemoryStats()
	logf("peak RSS %d KiB (at exit %d KiB anonymous, %d KiB of mapped files: the tfyarn binary)", mem.PeakKiB, mem.AnonKiB, mem.FileKiB)
}

// statusKey is the status key the client put in the AM's credentials; nil
// (the rendezvous makes a random one: the status JSON then answers no one)
// when there is none or it is too short.
func statusKey(creds *security.Credentials, logf func(string, ...any)) []byte {
	key, ok := creds.Secret(contract.StatusKeyAlias)
	if !ok {
		logf("no status key in the credentials: the status JSON answers no client")
		return nil
	}
	if err := contract.CheckStatusKey(key); err != nil {
		logf("%v: the status JSON answers no client", err)
		return nil
	}
	return key
}

// pythonFacts are the job's Python environment as the core words a task
// that could not reach it: its link names, a venv's base interpreter, the
// user the containers run as.
func pythonFacts(jf contract.JobFile) core.PythonFacts {
	if jf.PythonEnv == "" {
		return core.PythonFacts{}
	}
	links := append([]string{jf.PythonEnv}, jf.PythonEnvLayers...)
	return core.PythonFacts{Links: links, Base: jf.PythonBase, User: jf.User}
}

func groupSpecs(jf contract.JobFile) string {
	s := ""
	for i, g := range jf.Job.Tasks {
		if i > 0 {
			s += " "
		}
		s += "--" + string(g.Type) + " " + g.Spec()
	}
	return s
}
