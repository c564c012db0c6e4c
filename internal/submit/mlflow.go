package submit

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/buildinfo"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/mlflow"
	"github.com/tfyarn/tfyarn/jobreport"
)

// MLflow asks for the job's MLflow run (run --mlflow): the tracking
// server is MLflow's own variables' (MLFLOW_TRACKING_URI, ...).
type MLflow struct {
	// Experiment names the run's experiment; empty means the job's name.
	Experiment string
}

// mlflowTimeout bounds the tracking calls of a submission in all: a
// tracking server that does not answer delays the job this much at most.
const mlflowTimeout = 20 * time.Second

// mlflowTracker is the submission's run, once created or joined.
type mlflowTracker struct {
	client *mlflow.Client
	cfg    mlflow.Config
	run    mlflow.Run
	joined bool // MLFLOW_RUN_ID's run: its owner ends it, not tfyarn
}

// checkMLflow is --mlflow's check before anything is created: the
// tracking URI is set and an http(s) URL, its certificates readable.
func checkMLflow(job Job) error {
	if job.MLflow == nil {
		return nil
	}
	cfg, err := mlflow.ConfigFromEnv(os.Getenv)
	if err != nil {
		return invalidf("--mlflow: %v", err)
	}
	if _, err := mlflow.New(cfg); err != nil {
		return invalidf("--mlflow: %v", strings.TrimPrefix(err.Error(), "mlflow: "))
	}
	return nil
}

// startTracking creates the job's run (or joins MLFLOW_RUN_ID's), logs the
// job's params and tags, and gives the tasks and the AM the run: MLflow's
// variables in every task's environment, its credentials sealed among the
// secret ones, the run in the job file. A tracking server that is down or
// refuses costs the job its tracking only, said in one line.
func (s *Submission) startTracking(ctx context.Context, plan map[string]hdfs.Resource, pythonEnv string) {
	if s.job.MLflow == nil {
		return
	}
	cfg, err := mlflow.ConfigFromEnv(os.Getenv)
	if err != nil {
		return // checkMLflow said so already
	}
	c, err := mlflow.New(cfg)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, mlflowTimeout)
	defer cancel()
	run, err := s.createOrJoinRun(ctx, c)
	if err == nil {
		params, tags := s.mlflowParams(plan, pythonEnv), s.mlflowTags()
		if os.Getenv(mlflow.EnvRunID) != "" {
			// A joined run may have had a job before: its params cannot
			// change, its tags can; its final status is this job's (YARN's
			// UNDEFINED until the end is logged).
			maps.Copy(tags, params)
			params = nil
			tags[mlflow.TagFinalStatus] = "UNDEFINED"
		}
		err = c.LogBatch(ctx, run.ID, params, tags, nil)
	}
	if err != nil {
		s.trackingNotice(fmt.Sprintf("MLflow tracking lost: %s: %v; the job runs without its MLflow run (no params, status or metrics logged by tfyarn, no MLFLOW_RUN_ID in its tasks)", cfg.TrackingURI, err))
		return
	}
	s.tracker = &mlflowTracker{client: c, cfg: cfg, run: run, joined: os.Getenv(mlflow.EnvRunID) != ""}
	s.MLflowRunID, s.MLflowExperimentID = run.ID, run.ExperimentID
	s.giveTasksTheRun(cfg, run)
}

func (s *Submission) trackingNotice(msg string) {
	if s.cb.OnNotice != nil {
		s.cb.OnNotice(msg)
	}
}

func (s *Submission) createOrJoinRun(ctx context.Context, c *mlflow.Client) (mlflow.Run, error) {
	if id := os.Getenv(mlflow.EnvRunID); id != "" {
		return c.GetRun(ctx, id)
	}
	name := s.job.MLflow.Experiment
	if name == "" {
		name = s.job.Name
	}
	exp, err := c.ExperimentID(ctx, name)
	if err != nil {
		return mlflow.Run{}, err
	}
	return c.CreateRun(ctx, exp, s.AppID, nil)
}

// giveTasksTheRun puts MLflow's variables into every task's environment
// and the job file; the credentials go among the secret variables.
func (s *Submission) giveTasksTheRun(cfg mlflow.Config, run mlflow.Run) {
	env, secret := maps.Clone(s.job.Env), maps.Clone(s.job.SecretEnv)
	if env == nil {
		env = map[string]string{}
	}
	if secret == nil {
		secret = map[string]string{}
	}
	env[mlflow.EnvTrackingURI] = cfg.TrackingURI
	env[mlflow.EnvRunID] = run.ID
	env[mlflow.EnvExperiment] = run.ExperimentID
	for _, k := range mlflow.TLSVariables {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	for _, k := range mlflow.SecretVariables {
		if v := os.Getenv(k); v != "" {
			delete(env, k)
			secret[k] = v
		}
	}
	s.job.Env, s.job.SecretEnv = env, secret
}

// jobMLflow is the run for the job file, nil without one.
func (s *Submission) jobMLflow() *contract.JobMLflow {
	if s.tracker == nil {
		return nil
	}
	cfg := s.tracker.cfg
	return &contract.JobMLflow{TrackingURI: cfg.TrackingURI, ExperimentID: s.tracker.run.ExperimentID, RunID: s.tracker.run.ID,
		Joined: s.tracker.joined, InsecureTLS: cfg.InsecureTLS, ServerCertPath: cfg.ServerCertPath, ClientCertPath: cfg.ClientCertPath}
}

// mlflowParams are the job as params: task specs, framework, queue, node
// label, images, the environment's digest, the restarts policy.
func (s *Submission) mlflowParams(shipped map[string]hdfs.Resource, pythonEnv string) map[string]string {
	job := s.job
	p := map[string]string{
		"tfyarn.framework":    frameworks.NameOf(job.Job),
		"tfyarn.queue":        job.Queue,
		"tfyarn.max_restarts": strconv.Itoa(job.Restarts.Max),
		"tfyarn.am_attempts":  strconv.Itoa(job.AMAttempts),
		"tfyarn.command":      strings.TrimSpace(strings.Join(append([]string{job.Command, job.Script}, job.Args...), " ")),
	}
	for _, g := range job.Tasks {
		p["tfyarn.task."+string(g.Type)] = g.Spec()
	}
	if job.NodeLabel != "" {
		p["tfyarn.node_label"] = job.NodeLabel
	}
	for k, v := range job.Images {
		p["tfyarn.image."+orAll(k)] = v
	}
	if r, ok := shipped[pythonEnv]; ok && pythonEnv != "" {
		p["tfyarn.environment"] = path.Base(r.Path) // content-addressed: its digest
	}
	return p
}

func orAll(k string) string {
	if k == "" {
		return "all"
	}
	return k
}

// mlflowTags say which YARN application the run is, and who ran it how.
func (s *Submission) mlflowTags() map[string]string {
	return map[string]string{
		mlflow.TagAppID:      s.AppID,
		"tfyarn.user":        s.User,
		"tfyarn.queue":       s.job.Queue,
		"tfyarn.version":     buildinfo.Current().Version,
		"mlflow.user":        s.User,
		"mlflow.source.name": "tfyarn",
		"mlflow.source.type": "JOB",
	}
}

// failTracking ends the run FAILED when the submission failed after the
// run was made (a joined run gets the diagnostics only: its owner ends it).
func (s *Submission) failTracking(cause error) {
	if s.tracker == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), mlflowTimeout)
	defer cancel()
	_ = s.tracker.client.LogBatch(ctx, s.tracker.run.ID, nil, map[string]string{mlflow.TagDiagnostics: "submission failed: " + cause.Error()}, nil)
	if !s.tracker.joined {
		_ = s.tracker.client.SetTerminated(ctx, s.tracker.run.ID, mlflow.StatusFailed, time.Now())
	}
}

// FinishTracking logs the job's end into its run when no one did: the AM
// logs it as the job ends, but an AM killed or lost before that cannot.
// Best effort; the line returned ("" for none) says what tracking lost.
func (s *Submission) FinishTracking(ctx context.Context, res *jobreport.Result) string {
	if s.tracker == nil || res == nil || res.FinalStatus == "" || res.FinalStatus == "UNDEFINED" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mlflowTimeout)
	defer cancel()
	c, id := s.tracker.client, s.tracker.run.ID
	run, err := c.GetRun(ctx, id)
	if err == nil && s.amLoggedEnd(run) {
		return ""
	}
	if err == nil {
		tags := map[string]string{mlflow.TagFinalStatus: res.FinalStatus}
		if res.Diagnostics != "" {
			tags[mlflow.TagDiagnostics] = res.Diagnostics
		}
		err = c.LogBatch(ctx, id, nil, tags, []mlflow.Metric{{Key: "tfyarn.restarts", Value: float64(res.Restarts), Timestamp: time.Now().UnixMilli()}})
	}
	if err == nil && !s.tracker.joined {
		err = c.SetTerminated(ctx, id, mlflow.EndStatus(res.FinalStatus), time.Now())
	}
	if err != nil {
		return fmt.Sprintf("MLflow tracking lost: the run %s's end (%s): %v", id, res.FinalStatus, err)
	}
	return ""
}

// amLoggedEnd: the AM logged the job's end into run. It sets a run it
// created ended, then the tags; a joined run keeps its status, and its
// final-status tag was UNDEFINED from the submission until the AM's end.
// (A task's MLflow client may have ended the run: its status alone says
// nothing.)
func (s *Submission) amLoggedEnd(run mlflow.Run) bool {
	final := run.Tags[mlflow.TagFinalStatus]
	if s.tracker.joined {
		return final != "" && final != "UNDEFINED"
	}
	return final != "" && run.Status != mlflow.StatusRunning
}
