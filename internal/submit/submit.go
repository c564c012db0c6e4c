// Package submit is the engine behind client.Client.Submit: it checks a job
// (locally, then against the cluster: queue, container sizes, placement),
// ships the tfyarn binary and the job's files into the HDFS cache (packing
// environments and source directories, each once), writes the job file and
// the AM's credentials into the staging directory, and submits the
// ApplicationMaster's launch context. Nothing is created before the job
// has been checked, and an error leaves nothing behind. Following the
// submitted application is internal/follow's.
package submit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/connect"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/placement"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Options are the connection's part of a submission.
type Options struct {
	// CallTimeout bounds each ResourceManager and HDFS call.
	CallTimeout time.Duration
	// Keytab, when set, travels to the AM sealed, its key in the AM's
	// credentials (secure.go).
	Keytab string
	// Login logs in to Kerberos (nil, nil on an insecure cluster); called
	// once the job passed the checks that need no cluster.
	Login func() (*security.KerberosLogin, error)
}

// Callbacks tell the caller what happens on the way (client.Callbacks
// documents them); each may be nil.
type Callbacks struct {
	OnCacheNotice func(msg string)
	OnPacked      func(PackInfo)
	OnUpload      func(name string, size int64) (progress func(sent, total int64), done func())
	OnNotice      func(msg string)
}

// Submission is a submitted application, and what following it needs.
// Close it when done with it.
type Submission struct {
	AppID       string
	ID          *hadoopyarn.ApplicationIdProto
	StagingDir  string
	SubmittedAt time.Time
	// OrphansRemoved are staging directories of ended applications this
	// submission removed on its way (best effort, bounded).
	OrphansRemoved []Orphan
	// UploadedBytes is what this submission wrote to HDFS's cache.
	UploadedBytes int64
	// StatusKey is the job's status key: the AM's status JSON answers
	// whoever proves they hold it (contract.StatusKeyName).
	StatusKey []byte
	// User is who submitted the job (the Kerberos login's short name).
	User string
	RM   *yarn.ApplicationClient
	FS   *hdfs.FS // nil until the submission reached HDFS
	// MLflowRunID and MLflowExperimentID are the job's MLflow run (run
	// --mlflow), empty without one.
	MLflowRunID, MLflowExperimentID string

	job   Job
	opts  Options
	cb    Callbacks
	cache cacheStore              // the user's own cache or a shared directory
	login *security.KerberosLogin // nil on an insecure cluster
	// envLayers are the link names of a layered env's layers (ship).
	envLayers []string
	// envBase is the venv's base interpreter (ship; "" for none or a
	// conda env): contract.JobFile.PythonBase.
	envBase string
	// tracker is the job's MLflow run, nil without one.
	tracker *mlflowTracker
}

// Submit validates the job and its local files, checks it against the
// cluster, ships the tfyarn binary, the Python environment (packed first
// when it is a directory), the script, source directory, files and
// archives (each once: the HDFS cache is content-addressed) and the job
// description, and submits the ApplicationMaster.
func Submit(ctx context.Context, job Job, opts Options, cb Callbacks) (*Submission, error) {
	job = job.WithDefaults()
	gpuIdle, err := gpuIdleDefaults(job.Conf, job.GPUIdle)
	if err != nil {
		return nil, err
	}
	job.GPUIdle = gpuIdle
	plan, bin, err := checkLocally(job)
	if err != nil {
		return nil, err
	}
	login, err := opts.Login()
	if err != nil {
		return nil, err
	}
	if login != nil {
		job.User = login.User
	}
	rm, err := connect.RM(job.Conf, login, yarn.ClientOptions{User: job.User, DialTimeout: opts.CallTimeout / 3})
	if err != nil {
		return nil, err
	}
	s := &Submission{job: job, opts: opts, cb: cb, RM: rm, User: job.User, login: login}
	if err := s.submit(ctx, bin, plan); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// checkLocally is every check that needs no cluster: the job, its success
// rule and TensorBoard task, its local files (the shipping plan), the
// binary to ship, the AM's attempts and the extra filesystems.
func checkLocally(job Job) (shipplan.Plan, string, error) {
	if err := job.Validate(taskspec.ClusterLimits{}); err != nil {
		return shipplan.Plan{}, "", err
	}
	if _, err := taskspec.SuccessRuleOf(job.Success, job.Job); err != nil {
		return shipplan.Plan{}, "", &taskspec.ValidationError{Message: err.Error()}
	}
	if err := job.checkTensorBoard(); err != nil {
		return shipplan.Plan{}, "", err
	}
	plan, err := planShipping(job)
	if err != nil {
		return shipplan.Plan{}, "", err
	}
	bin, err := job.binary()
	if err != nil {
		return shipplan.Plan{}, "", fmt.Errorf("client: finding the tfyarn binary to ship: %w", err)
	}
	if st, err := os.Stat(bin); err != nil || !st.Mode().IsRegular() {
		return shipplan.Plan{}, "", fmt.Errorf("client: the tfyarn binary to ship, %s, is not a regular file", bin)
	}
	if err := checkAttempts(job); err != nil {
		return shipplan.Plan{}, "", err
	}
	if err := checkMLflow(job); err != nil {
		return shipplan.Plan{}, "", err
	}
	if err := checkCheckpoint(job); err != nil {
		return shipplan.Plan{}, "", err
	}
	for _, uri := range job.FileSystems {
		if _, err := job.Conf.HDFS(uri); err != nil {
			return shipplan.Plan{}, "", &taskspec.ValidationError{Message: "--file-systems: " + strings.TrimPrefix(err.Error(), "hadoopconf: ")}
		}
	}
	return plan, bin, nil
}

func (s *Submission) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.CallTimeout)
}

// clusterOffer is what the cluster offers the job's queue, for the AM's
// diagnostics (contract.JobFile.ClusterOffers, QueueDefaultLabel).
type clusterOffer struct {
	offers       map[string]string
	defaultLabel string
	// amNodes, when the job excludes nodes, are the running nodes the AM
	// may go to (amPlacement); nil for anywhere.
	amNodes []placement.Node
	// largestNode is, per label, the memory of the largest running node.
	largestNode map[string]int64
}

func (s *Submission) submit(ctx context.Context, bin string, plan shipplan.Plan) error {
	cctx, cancel := s.call(ctx)
	defer cancel()
	offer, err := s.checkAgainstCluster(ctx, cctx)
	if err != nil {
		return err
	}
	if s.FS, err = connect.HDFS(cctx, s.job.Conf, s.login, hdfs.Options{User: s.job.User}); err != nil {
		return err
	}
	if s.cache, err = s.openCache(cctx); err != nil {
		return err
	}
	if err := s.prepareCheckpoints(cctx); err != nil {
		return err
	}
	s.cleanOrphans(ctx)
	// The launcher is public: it is tfyarn, nothing of the user's. In a
	// shared directory it is, like every file, only ever the user's own
	// upload or the administrator's (hdfs.SharedCache).
	binRes, n, err := s.uploadKnown(ctx, bin, contract.BinaryName, plan.AccessOf(contract.BinaryName, hdfs.Public))
	s.UploadedBytes = n
	if err != nil {
		return err
	}
	shipped, n, err := s.ship(ctx, plan)
	s.UploadedBytes += n
	if err != nil {
		return err
	}
	shipped[contract.BinaryName] = binRes
	return s.stageAndSubmit(ctx, plan, shipped, offer)
}

// checkAgainstCluster checks the queue, the job's containers against the
// cluster's largest and what the cluster can place, per label, counting
// the AM, and reserves the application's id: a job that can never run is
// refused here; one that cannot run now is the AM's allocation deadline's.
// An RM that will not say what it can place skips that check.
func (s *Submission) checkAgainstCluster(ctx, cctx context.Context) (clusterOffer, error) {
	job := s.job
	features, err := probeFeatures(cctx, s.RM)
	if err != nil {
		return clusterOffer{}, err
	}
	if err := checkFeatures(job, features); err != nil {
		return clusterOffer{}, err
	}
	if err := checkQueue(cctx, s.RM, job.Queue); err != nil {
		return clusterOffer{}, err
	}
	// getNewApplication only reserves an id: nothing shows in the RM's
	// application list until submitApplication.
	newApp, err := s.RM.GetNewApplication(cctx)
	if err != nil {
		return clusterOffer{}, err
	}
	if err := checkFits(job, newApp, nil); err != nil {
		return clusterOffer{}, err
	}
	var offer clusterOffer
	if cs, err := fetchClusterState(cctx, s.RM, job.Queue); err == nil {
		am := placement.AM{NodeLabel: job.AMNodeLabel, Resources: taskspec.Resources{VCores: job.AMVCores, MemoryMiB: job.AMMemoryMiB}}
		if err := placement.Check(job.Job, am, cs); err != nil {
			return clusterOffer{}, err
		}
		offer = clusterOffer{offers: placement.Offers(cs), defaultLabel: cs.Queue.DefaultLabel, largestNode: largestNodes(cs.Nodes)}
		if offer.amNodes, err = amNodes(job.ExcludeNodes, cs.Nodes); err != nil {
			return clusterOffer{}, err
		}
	} else if ctx.Err() != nil {
		return clusterOffer{}, err
	}
	s.ID = newApp.GetApplicationId()
	s.AppID = yarn.FormatApplicationID(s.ID)
	return offer, nil
}

// stageAndSubmit creates the staging directory, writes the status key and
// the job file there, and submits the AM's launch context; on failure it
// removes the directory (and kills the application, in case the RM took
// it).
func (s *Submission) stageAndSubmit(ctx context.Context, plan shipplan.Plan, shipped map[string]hdfs.Resource, offer clusterOffer) (err error) {
	created, submitting := false, false
	defer func() {
		if err != nil && created {
			s.cleanupFailedSubmit(err, submitting)
			s.failTracking(err)
		}
	}()
	cctx, cancel := s.call(ctx)
	defer cancel()
	if s.StagingDir, err = s.FS.CreateStaging(cctx, s.AppID); err != nil {
		return err
	}
	created = true
	if s.StatusKey, err = contract.NewStatusKey(); err != nil {
		return err
	}
	if err := s.FS.WriteStatusKey(cctx, s.AppID, contract.StatusKeyName, s.StatusKey); err != nil {
		return err
	}
	sec, err := s.secure(cctx)
	if err != nil {
		return err
	}
	s.startTracking(ctx, shipped, plan.PythonEnv)
	jf := s.jobFile(plan, shipped, offer, sec)
	data, err := jf.Marshal()
	if err != nil {
		return err
	}
	jobRes, err := s.FS.UploadBytes(cctx, data, path.Join(s.StagingDir, contract.JobFileName))
	if err != nil {
		return err
	}
	s.SubmittedAt = time.Now()
	submitting = true
	app := submissionContext(s.job, s.ID, s.StagingDir, shipped[contract.BinaryName], jobRes)
	app.AmContainerResourceRequest = amPlacement(app, offer.amNodes)
	sec.apply(app.AmContainerSpec)
	if err := shareRendezvousSecret(app.AmContainerSpec, s.job.AMAttempts); err != nil {
		return err
	}
	if err := addSecretEnv(app.AmContainerSpec, s.job.SecretEnv); err != nil {
		return err
	}
	if err := addAMSecret(app.AmContainerSpec, contract.StatusKeyAlias, s.StatusKey); err != nil {
		return err
	}
	return s.RM.SubmitApplication(cctx, app)
}

// jobFile is the job description the AM reads (contract.JobFile).
func (s *Submission) jobFile(plan shipplan.Plan, shipped map[string]hdfs.Resource, offer clusterOffer, sec secureParts) contract.JobFile {
	job := s.job
	jf := contract.NewJobFile(s.AppID, job.User, s.StagingDir, job.Job, job.Conf)
	jf.TaskResources = shipped
	jf.PythonEnv, jf.PythonPath = plan.PythonEnv, plan.PythonPath
	jf.PythonEnvLayers = s.envLayers
	jf.PythonBase = s.envBase
	jf.Success = job.Success
	jf.RendezvousTimeout = job.RendezvousTimeout
	jf.AllocTimeout = job.AllocTimeout
	jf.ClusterOffers = offer.offers
	jf.LargestNodeMiB = offer.largestNode
	jf.QueueDefaultLabel = offer.defaultLabel
	jf.Commands = job.taskCommands()
	jf.Kerberos = sec.job
	jf.MLflow = s.jobMLflow()
	if job.Script != "" {
		// The AM runs commands: the script (shipped beside the
		// launcher, or inside src/) becomes python's argument.
		jf.Job.Command, jf.Job.Args, jf.Job.Script = plan.Command, plan.Args, ""
	}
	return jf
}

// cleanupFailedSubmit removes the staging directory, and kills the
// application in case submitApplication reached the RM even though the call
// failed (a timeout on the answer).
func (s *Submission) cleanupFailedSubmit(cause error, submitting bool) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CallTimeout)
	defer cancel()
	if submitting {
		// Best effort: "not found" means the RM never took it, and an RM
		// that cannot be reached cannot be asked either.
		_, _ = s.RM.ForceKillApplication(ctx, s.ID, "tfyarn: submission failed: "+cause.Error())
	}
	_ = s.FS.RemoveStaging(ctx, s.AppID)
}

// Close drops the connections.
func (s *Submission) Close() error {
	var errs []error
	if s.FS != nil {
		errs = append(errs, s.FS.Close())
	}
	errs = append(errs, s.RM.Close())
	return errors.Join(errs...)
}
