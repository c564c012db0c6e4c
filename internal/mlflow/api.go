package mlflow

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"
)

// A run's statuses (MLflow's RunStatus).
const (
	StatusRunning  = "RUNNING"
	StatusFinished = "FINISHED"
	StatusFailed   = "FAILED"
	StatusKilled   = "KILLED"
)

// MLflow's limits on one log-batch call and on keys and values.
const (
	batchParams    = 100
	batchTags      = 100
	batchMetrics   = 1000
	maxKeyLen      = 250
	maxParamValLen = 6000
	maxTagValLen   = 8000
)

const api = "/api/2.0/mlflow"

// Metric is one value of a run's metric.
type Metric struct {
	Key   string  `json:"key"`
	Value float64 `json:"value"`
	// Timestamp in milliseconds since the epoch.
	Timestamp int64 `json:"timestamp"`
	Step      int64 `json:"step"`
}

// Run is a run as the server reports it.
type Run struct {
	ID           string
	ExperimentID string
	Status       string
	ArtifactURI  string
	Params       map[string]string
	Tags         map[string]string
	Metrics      map[string]float64 // each metric's latest value
}

type keyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type runJSON struct {
	Info struct {
		RunID        string `json:"run_id"`
		ExperimentID string `json:"experiment_id"`
		Status       string `json:"status"`
		ArtifactURI  string `json:"artifact_uri"`
	} `json:"info"`
	Data struct {
		Params  []keyValue `json:"params"`
		Tags    []keyValue `json:"tags"`
		Metrics []Metric   `json:"metrics"`
	} `json:"data"`
}

func (r runJSON) run() Run {
	run := Run{ID: r.Info.RunID, ExperimentID: r.Info.ExperimentID, Status: r.Info.Status, ArtifactURI: r.Info.ArtifactURI,
		Params: map[string]string{}, Tags: map[string]string{}, Metrics: map[string]float64{}}
	for _, p := range r.Data.Params {
		run.Params[p.Key] = p.Value
	}
	for _, t := range r.Data.Tags {
		run.Tags[t.Key] = t.Value
	}
	for _, m := range r.Data.Metrics {
		run.Metrics[m.Key] = m.Value
	}
	return run
}

// ExperimentID is the id of the experiment of that name, created when
// there is none.
func (c *Client) ExperimentID(ctx context.Context, name string) (string, error) {
	id, err := c.experimentByName(ctx, name)
	if err == nil || !IsCode(err, "RESOURCE_DOES_NOT_EXIST") {
		return id, err
	}
	var created struct {
		ID string `json:"experiment_id"`
	}
	err = c.call(ctx, "POST", api+"/experiments/create", nil, map[string]string{"name": name}, &created)
	if IsCode(err, "RESOURCE_ALREADY_EXISTS") {
		return c.experimentByName(ctx, name) // created meanwhile by another client
	}
	return created.ID, err
}

func (c *Client) experimentByName(ctx context.Context, name string) (string, error) {
	var got struct {
		Experiment struct {
			ID string `json:"experiment_id"`
		} `json:"experiment"`
	}
	err := c.call(ctx, "GET", api+"/experiments/get-by-name", url.Values{"experiment_name": {name}}, nil, &got)
	return got.Experiment.ID, err
}

// CreateRun starts a run in the experiment, with these tags.
func (c *Client) CreateRun(ctx context.Context, experimentID, name string, tags map[string]string) (Run, error) {
	req := struct {
		ExperimentID string     `json:"experiment_id"`
		RunName      string     `json:"run_name,omitempty"`
		StartTime    int64      `json:"start_time"`
		Tags         []keyValue `json:"tags,omitempty"`
	}{experimentID, name, time.Now().UnixMilli(), clipped(tags, maxTagValLen)}
	var got struct {
		Run runJSON `json:"run"`
	}
	if err := c.call(ctx, "POST", api+"/runs/create", nil, req, &got); err != nil {
		return Run{}, err
	}
	return got.Run.run(), nil
}

// GetRun is the run with its params, tags and latest metrics.
func (c *Client) GetRun(ctx context.Context, runID string) (Run, error) {
	var got struct {
		Run runJSON `json:"run"`
	}
	if err := c.call(ctx, "GET", api+"/runs/get", url.Values{"run_id": {runID}}, nil, &got); err != nil {
		return Run{}, err
	}
	return got.Run.run(), nil
}

// LogBatch logs params, tags and metrics into the run, in as many calls as
// MLflow's limits per call need. Keys and values over MLflow's lengths are
// clipped. A param already logged with another value is refused by the
// server (params do not change).
func (c *Client) LogBatch(ctx context.Context, runID string, params, tags map[string]string, metrics []Metric) error {
	ps, ts := clipped(params, maxParamValLen), clipped(tags, maxTagValLen)
	for len(ps) > 0 || len(ts) > 0 || len(metrics) > 0 {
		var req struct {
			RunID   string     `json:"run_id"`
			Params  []keyValue `json:"params,omitempty"`
			Tags    []keyValue `json:"tags,omitempty"`
			Metrics []Metric   `json:"metrics,omitempty"`
		}
		req.RunID = runID
		req.Params, ps = ps[:min(len(ps), batchParams)], ps[min(len(ps), batchParams):]
		req.Tags, ts = ts[:min(len(ts), batchTags)], ts[min(len(ts), batchTags):]
		// At most 1000 entities in all.
		room := batchMetrics - len(req.Params) - len(req.Tags)
		req.Metrics, metrics = metrics[:min(len(metrics), room)], metrics[min(len(metrics), room):]
		if err := c.call(ctx, "POST", api+"/runs/log-batch", nil, req, nil); err != nil {
			return err
		}
	}
	return nil
}

// SetTerminated ends the run with status (StatusFinished, StatusFailed,
// StatusKilled) at end.
func (c *Client) SetTerminated(ctx context.Context, runID, status string, end time.Time) error {
	req := struct {
		RunID   string `json:"run_id"`
		Status  string `json:"status"`
		EndTime int64  `json:"end_time"`
	}{runID, status, end.UnixMilli()}
	return c.call(ctx, "POST", api+"/runs/update", nil, req, nil)
}

// UploadArtifact puts data at name (a relative path) among the run's
// artifacts, through the server's artifact proxy: the run's artifact URI
// must be an mlflow-artifacts: one (the server runs with --serve-artifacts).
func (c *Client) UploadArtifact(ctx context.Context, run Run, name string, data []byte) error {
	if len(data) > MaxArtifactBytes {
		return fmt.Errorf("mlflow: artifact %s: %d bytes, over the %d tfyarn uploads", name, len(data), MaxArtifactBytes)
	}
	dir, err := proxiedArtifactPath(run.ArtifactURI)
	if err != nil {
		return err
	}
	clean := path.Clean("/" + name)[1:]
	if clean == "" || clean != name {
		return fmt.Errorf("mlflow: artifact name %q is not a clean relative path", name)
	}
	p := "/api/2.0/mlflow-artifacts/artifacts/" + escapePath(path.Join(dir, clean))
	return c.call(ctx, "PUT", p, nil, data, nil)
}

// proxiedArtifactPath is the path under the artifact proxy of a run's
// artifact URI: mlflow-artifacts:/1/RUN/artifacts and
// mlflow-artifacts://host:port/1/RUN/artifacts both give 1/RUN/artifacts.
func proxiedArtifactPath(artifactURI string) (string, error) {
	u, err := url.Parse(artifactURI)
	if err != nil || u.Scheme != "mlflow-artifacts" {
		return "", fmt.Errorf("mlflow: the run's artifacts are stored at %q, not behind the server's artifact proxy: start the server with --serve-artifacts", artifactURI)
	}
	p := strings.Trim(path.Clean("/"+u.Path), "/")
	if p == "" {
		return "", fmt.Errorf("mlflow: the run's artifact URI %q names no directory", artifactURI)
	}
	return p, nil
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// clipped is m as MLflow's key-value list, sorted by key, its keys and
// values cut to MLflow's limits.
func clipped(m map[string]string, maxVal int) []keyValue {
	out := make([]keyValue, 0, len(m))
	for k, v := range m {
		out = append(out, keyValue{Key: clip(k, maxKeyLen), Value: clip(v, maxVal)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-3], "") + "..."
}
