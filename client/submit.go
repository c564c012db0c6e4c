package client

import (
	"context"
	"errors"
	"time"

	"github.com/tfyarn/tfyarn/internal/follow"
	"github.com/tfyarn/tfyarn/internal/submit"
)

// Callbacks tell the caller of Submit what happens on the way to the
// cluster; each may be nil.
type Callbacks struct {
	// OnCacheNotice is told (one line each) of shared cache entries passed
	// over.
	OnCacheNotice func(msg string)
	// OnPacked is told about each directory packed for the job.
	OnPacked func(PackInfo)
	// OnUpload follows each file's way into the HDFS cache (see
	// UploadFunc); the CLI draws progress bars with it.
	OnUpload UploadFunc
	// OnNotice is told (one line) what the job's MLflow tracking lost
	// when the tracking server is down or refuses (Job.MLflow).
	OnNotice func(msg string)
}

// UploadFunc is told that a file of the job is about to go to the HDFS
// cache (name as in the cache, size in bytes). The progress function it
// returns, if not nil, follows the upload, which happens only when the
// cache lacks the file; done is called once the file is there (or failed).
type UploadFunc func(name string, size int64) (progress func(sent, total int64), done func())

// PackInfo describes an environment or source directory packed for a job.
type PackInfo struct {
	Dir  string
	Link string // name in the containers: env or src
	// Kind is the environment's, venv or conda, and PythonVersion its
	// Python's (when known); both are empty for a source directory.
	Kind, PythonVersion string
	Bytes               int64 // the archive's size
	SHA256              string
	Took                time.Duration
	// Cached: the directory had not changed since it was packed for an
	// earlier job (same fingerprint) and the HDFS cache still holds that
	// archive, so nothing was packed, read or uploaded; Took is the check.
	Cached bool
	// Layers is how many layers a venv was shipped in (envpack.PackLayers;
	// 0: one archive), LayersPacked how many of them were packed this time
	// (the others were unchanged since an earlier job). SHA256 is then
	// envpack.LayersDigest's and Bytes the layers' total.
	Layers, LayersPacked int
}

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
	// MLflowRunID and MLflowExperimentID are the job's MLflow run
	// (Job.MLflow), empty without one.
	MLflowRunID, MLflowExperimentID string

	sub      *submit.Submission
	follow   *follow.Follower
	onNotice func(string)
}

// Submit validates the job and its local files, checks it against the
// cluster, ships the tfyarn binary, the Python environment (packed first when
// it is a directory), the script, source directory, files and archives (each
// once: the HDFS cache is content-addressed) and the job description, and
// submits the ApplicationMaster. Nothing is created before the job has been checked, and
// an error leaves nothing behind. The work is internal/submit's.
func (c *Client) Submit(ctx context.Context, job Job, cb Callbacks) (*Submission, error) {
	ecb := submit.Callbacks{OnCacheNotice: cb.OnCacheNotice, OnUpload: cb.OnUpload, OnNotice: cb.OnNotice}
	if cb.OnPacked != nil {
		ecb.OnPacked = func(p submit.PackInfo) { cb.OnPacked(PackInfo(p)) }
	}
	opts := submit.Options{CallTimeout: c.conn.CallTimeout, Keytab: c.conn.Keytab, Login: c.session.Login}
	sub, err := submit.Submit(ctx, job.engineJob(c.conf, c.conn.User), opts, ecb)
	var qe *submit.QueueError
	if errors.As(err, &qe) {
		return nil, &QueueError{Queue: qe.Queue, Known: qe.Known}
	}
	if err != nil {
		return nil, err
	}
	s := &Submission{AppID: sub.AppID, StagingDir: sub.StagingDir, SubmittedAt: sub.SubmittedAt,
		UploadedBytes: sub.UploadedBytes, MLflowRunID: sub.MLflowRunID, MLflowExperimentID: sub.MLflowExperimentID, sub: sub, onNotice: cb.OnNotice}
	for _, o := range sub.OrphansRemoved {
		s.OrphansRemoved = append(s.OrphansRemoved, OrphanedStaging(o))
	}
	s.follow = follow.New(follow.App{AppID: sub.AppID, ID: sub.ID, User: sub.User, RM: sub.RM, FS: sub.FS,
		StatusKey: sub.StatusKey, UploadedBytes: sub.UploadedBytes},
		follow.Options{CallTimeout: c.conn.CallTimeout, PollInterval: c.conn.PollInterval})
	return s, nil
}

// Close drops the connections (an attached Submission's are its Client's).
func (s *Submission) Close() error {
	if s.sub == nil {
		return nil
	}
	return s.sub.Close()
}
