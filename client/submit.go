package client

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

// Submission is a submitted application: Wait for it, or Kill it. Close it
// when done with it (Wait does not).
type Submission struct {
	AppID       string
	StagingDir  string
	SubmittedAt time.Time
	// OrphansRemoved are staging directories of ended applications this
	// submission removed on its way (best effort, bounded).
	OrphansRemoved []OrphanedStaging
	// UploadedBytes is what this submission wrote to HDFS's cache (the
	// binary, environment, script, source directory, files and archives;
	// not the small per-application job description): 0 when the cache
	// had them all.
	UploadedBytes int64

	job Job
	// conn is the Client's: timeouts, the poll interval, the keytab.
	conn   Connection
	cb     Callbacks
	id     *hadoopyarn.ApplicationIdProto
	status *statusWatcher // set by Wait
	// statusKey is the job's status key: the AM's status JSON answers
	// whoever proves they hold it (contract.StatusKeyName).
	statusKey []byte
	attempts  *attemptWatcher // set by Wait
	rm        *yarn.ApplicationClient
	fs        *hdfs.FS
	cache     cacheStore              // the user's own cache or a shared directory
	login     *security.KerberosLogin // nil on an insecure cluster
	// envLayers are the link names of a layered env's layers (ship).
	envLayers []string
	// envBase is the venv's base interpreter (ship; "" for none or a
	// conda env): contract.JobFile.PythonBase.
	envBase string
}

// Submit validates the job and its local files, checks it against the
// cluster, ships the tfyarn binary, the Python environment (packed first when
// it is a directory), the script, source directory, files and archives (each
// once: the HDFS cache is content-addressed) and the job description, and
// submits the ApplicationMaster. Nothing is created before the job has been checked, and
// an error leaves nothing behind.
func (c *Client) Submit(ctx context.Context, job Job, cb Callbacks) (*Submission, error) {
	job.conf, job.user = c.conf, c.conn.User
	job = job.withDefaults()
	if err := job.Validate(taskspec.ClusterLimits{}); err != nil {
		return nil, err
	}
	if _, err := taskspec.SuccessRuleOf(job.Success, job.Job); err != nil {
		return nil, &taskspec.ValidationError{Message: err.Error()}
	}
	if err := job.checkTensorBoard(); err != nil {
		return nil, err
	}
	plan, err := planShipping(job)
	if err != nil {
		return nil, err
	}
	bin, err := job.binary()
	if err != nil {
		return nil, fmt.Errorf("client: finding the tfyarn binary to ship: %w", err)
	}
	if st, err := os.Stat(bin); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("client: the tfyarn binary to ship, %s, is not a regular file", bin)
	}
	if err := checkAttempts(job); err != nil {
		return nil, err
	}
	for _, uri := range job.FileSystems {
		if _, err := job.conf.HDFS(uri); err != nil {
			return nil, &taskspec.ValidationError{Message: "--file-systems: " + strings.TrimPrefix(err.Error(), "hadoopconf: ")}
		}
	}
	login, err := c.kerberos()
	if err != nil {
		return nil, err
	}
	if login != nil {
		job.user = login.User
	}
	rm, err := connect.RM(job.conf, login, yarn.ClientOptions{User: job.user, DialTimeout: c.conn.CallTimeout / 3})
	if err != nil {
		return nil, err
	}
	s := &Submission{job: job, conn: c.conn, cb: cb, rm: rm, login: login}
	if err := s.submit(ctx, bin, plan); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Submission) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.conn.CallTimeout)
}

func (s *Submission) submit(ctx context.Context, bin string, plan shipplan.Plan) error {
	job := s.job
	cctx, cancel := s.call(ctx)
	defer cancel()
	if err := checkQueue(cctx, s.rm, job.Queue); err != nil {
		return err
	}
	// getNewApplication only reserves an id: nothing shows in the RM's
	// application list until submitApplication.
	newApp, err := s.rm.GetNewApplication(cctx)
	if err != nil {
		return err
	}
	if err := checkFits(job, newApp, nil); err != nil {
		return err
	}
	// What the cluster can place, per label, counting the AM: a job that
	// can never run is refused here; one that cannot run now is the AM's
	// allocation deadline's. An RM that will not say skips the check.
	var offers map[string]string
	var defaultLabel string
	if cs, err := fetchClusterState(cctx, s.rm, job.Queue); err == nil {
		if err := placement.Check(job.Job, placement.AM{NodeLabel: job.AMNodeLabel, Resources: taskspec.Resources{VCores: job.AMVCores, MemoryMiB: job.AMMemoryMiB}}, cs); err != nil {
			return err
		}
		offers, defaultLabel = placement.Offers(cs), cs.Queue.DefaultLabel
	} else if ctx.Err() != nil {
		return err
	}
	s.id = newApp.GetApplicationId()
	s.AppID = yarn.FormatApplicationID(s.id)

	if s.fs, err = connect.HDFS(cctx, job.conf, s.login, hdfs.Options{User: job.user}); err != nil {
		return err
	}
	if s.cache, err = s.openCache(cctx); err != nil {
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
	created, submitting := false, false
	err = func() error {
		cctx, cancel := s.call(ctx)
		defer cancel()
		if s.StagingDir, err = s.fs.CreateStaging(cctx, s.AppID); err != nil {
			return err
		}
		created = true
		if s.statusKey, err = contract.NewStatusKey(); err != nil {
			return err
		}
		if err := s.fs.WriteStatusKey(cctx, s.AppID, contract.StatusKeyName, s.statusKey); err != nil {
			return err
		}
		jf := contract.NewJobFile(s.AppID, job.user, s.StagingDir, job.Job, job.conf)
		shipped[contract.BinaryName] = binRes
		jf.TaskResources = shipped
		jf.PythonEnv, jf.PythonPath = plan.PythonEnv, plan.PythonPath
		jf.PythonEnvLayers = s.envLayers
		jf.PythonBase = s.envBase
		jf.Success = job.Success
		jf.RendezvousTimeout = job.RendezvousTimeout
		jf.AllocTimeout = job.AllocTimeout
		jf.ClusterOffers = offers
		jf.QueueDefaultLabel = defaultLabel
		jf.Commands = job.taskCommands()
		sec, err := s.secure(cctx)
		if err != nil {
			return err
		}
		jf.Kerberos = sec.job
		if job.Script != "" {
			// The AM runs commands: the script (shipped beside the
			// launcher, or inside src/) becomes python's argument.
			jf.Job.Command, jf.Job.Args, jf.Job.Script = plan.Command, plan.Args, ""
		}
		data, err := jf.Marshal()
		if err != nil {
			return err
		}
		jobRes, err := s.fs.UploadBytes(cctx, data, path.Join(s.StagingDir, contract.JobFileName))
		if err != nil {
			return err
		}
		s.SubmittedAt = time.Now()
		submitting = true
		app := submissionContext(job, s.id, s.StagingDir, binRes, jobRes)
		sec.apply(app.AmContainerSpec)
		if err := shareRendezvousSecret(app.AmContainerSpec, job.AMAttempts); err != nil {
			return err
		}
		if err := addSecretEnv(app.AmContainerSpec, job.SecretEnv); err != nil {
			return err
		}
		if err := addAMSecret(app.AmContainerSpec, contract.StatusKeyAlias, s.statusKey); err != nil {
			return err
		}
		return s.rm.SubmitApplication(cctx, app)
	}()
	if err != nil && created {
		s.cleanupFailedSubmit(err, submitting)
	}
	return err
}

// cleanupFailedSubmit removes the staging directory, and kills the
// application in case submitApplication reached the RM even though the call
// failed (a timeout on the answer).
func (s *Submission) cleanupFailedSubmit(cause error, submitting bool) {
	ctx, cancel := context.WithTimeout(context.Background(), s.conn.CallTimeout)
	defer cancel()
	if submitting {
		// Best effort: "not found" means the RM never took it, and an RM
		// that cannot be reached cannot be asked either.
		_, _ = s.rm.ForceKillApplication(ctx, s.id, "tfyarn: submission failed: "+cause.Error())
	}
	_ = s.fs.RemoveStaging(ctx, s.AppID)
}

// Close drops the connections.
func (s *Submission) Close() error {
	var errs []error
	if s.fs != nil {
		errs = append(errs, s.fs.Close())
	}
	errs = append(errs, s.rm.Close())
	return errors.Join(errs...)
}

// removeStaging deletes the staging directory; the AM removes it too on its
// way out, whichever comes first.
func (s *Submission) removeStaging() error {
	if s.fs == nil || s.AppID == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.conn.CallTimeout)
	defer cancel()
	return s.fs.RemoveStaging(ctx, s.AppID)
}
