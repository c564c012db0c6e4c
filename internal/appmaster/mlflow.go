package appmaster

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/mlflow"
)

// amLogArtifactBytes bounds the AM's log uploaded as an artifact: its end.
const amLogArtifactBytes = 4 << 20

// mlflowEndTimeout bounds the AM's logging of the job's end: it runs
// before unregistering, and a tracking server that does not answer must
// not hold the application's end for long.
const mlflowEndTimeout = 20 * time.Second

// jobTracking is the job's MLflow run as the AM logs into it (run
// --mlflow), nil without one.
type jobTracking struct {
	client *mlflow.Client
	runID  string
	joined bool // the caller's run: its status is left to its owner
	logDir string
}

// startTracking is trackingOf's client, its run tagged (start).
func startTracking(ctx context.Context, jf contract.JobFile, secretEnv map[string]string, getenv func(string) string, trackingURL string, attempt int, logf func(string, ...any)) *jobTracking {
	t := trackingOf(jf, secretEnv, getenv, logf)
	t.start(ctx, trackingURL, attempt, logf)
	return t
}

// trackingOf is the client of the job's run: its server from the job
// file, its credentials from the secret environment (sealed, as every
// task gets them). A client that cannot be made is said in one line.
func trackingOf(jf contract.JobFile, secretEnv map[string]string, getenv func(string) string, logf func(string, ...any)) *jobTracking {
	m := jf.MLflow
	if m == nil {
		return nil
	}
	cfg := mlflow.Config{TrackingURI: m.TrackingURI, InsecureTLS: m.InsecureTLS, ServerCertPath: m.ServerCertPath, ClientCertPath: m.ClientCertPath,
		Token: secretEnv[mlflow.EnvToken], Username: secretEnv[mlflow.EnvUsername], Password: secretEnv[mlflow.EnvPassword]}
	c, err := mlflow.New(cfg)
	if err != nil {
		logf("MLflow tracking lost: %v: the run %s's end (status, metrics, artifacts) is not logged", err, m.RunID)
		return nil
	}
	logDir, _, _ := strings.Cut(getenv("LOG_DIRS"), ",")
	return &jobTracking{client: c, runID: m.RunID, joined: m.Joined, logDir: logDir}
}

// start tags the run with the job's tracking URL and this AM attempt, in
// the background: the job does not wait for the tracking server.
func (t *jobTracking) start(ctx context.Context, trackingURL string, attempt int, logf func(string, ...any)) {
	if t == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(ctx, mlflowEndTimeout)
		defer cancel()
		tags := map[string]string{"tfyarn.tracking_url": trackingURL, "tfyarn.am_attempt": strconv.Itoa(max(attempt, 1))}
		if err := t.client.LogBatch(ctx, t.runID, nil, tags, nil); err != nil {
			logf("MLflow: tagging the run %s with the tracking URL: %v", t.runID, err)
		}
	}()
}

// end logs the job's end into its run: status, metrics, and the job's
// history record and the AM's log as artifacts. A failure costs tracking
// only, said in one line.
func (t *jobTracking) end(ctx context.Context, rep contract.StatusReport, logf func(string, ...any)) {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, mlflowEndTimeout)
	defer cancel()
	artifacts := map[string][]byte{}
	if data, err := json.MarshalIndent(rep, "", "  "); err == nil {
		artifacts[mlflow.ArtifactHistory] = data
	}
	if data := t.amLog(); data != nil {
		artifacts[mlflow.ArtifactAMLog] = data
	}
	if err := t.client.LogEnd(ctx, t.runID, rep, artifacts, !t.joined); err != nil {
		logf("MLflow tracking lost: the run %s's end (%s) was not all logged: %s", t.runID, rep.FinalStatus, strings.ReplaceAll(err.Error(), "\n", "; "))
		return
	}
	if t.joined {
		logf("MLflow run %s (the caller's, left running) got the job's end %s (metrics and artifacts logged)", t.runID, rep.FinalStatus)
		return
	}
	logf("MLflow run %s ended %s (metrics and artifacts logged)", t.runID, mlflow.EndStatus(rep.FinalStatus))
}

// amLog is the end of this AM's log so far, nil when it cannot be read.
func (t *jobTracking) amLog() []byte {
	if t.logDir == "" {
		return nil
	}
	f, err := os.Open(filepath.Join(t.logDir, "am.stderr"))
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > amLogArtifactBytes {
		if _, err := f.Seek(st.Size()-amLogArtifactBytes, io.SeekStart); err != nil {
			return nil
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, amLogArtifactBytes))
	if err != nil {
		return nil
	}
	return data
}
