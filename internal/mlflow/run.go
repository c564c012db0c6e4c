package mlflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/jobreport"
)

// Keys tfyarn logs under: its own prefix, so that a joined run's params
// (MLFLOW_RUN_ID) never collide with the caller's.
const (
	KeyPrefix       = "tfyarn."
	TagAppID        = "tfyarn.application_id"
	TagFinalStatus  = "tfyarn.final_status"
	TagDiagnostics  = "tfyarn.diagnostics"
	ArtifactHistory = "tfyarn/history.json"
	ArtifactAMLog   = "tfyarn/am.log"
)

// EndStatus is the run's status for a YARN final status (SUCCEEDED,
// FAILED, KILLED).
func EndStatus(finalStatus string) string {
	switch finalStatus {
	case "SUCCEEDED":
		return StatusFinished
	case "KILLED":
		return StatusKilled
	}
	return StatusFailed
}

// EndMetrics are the job's figures at its end from its final report: wall
// time, time until every task ran, restarts, and each task's peak memory,
// CPU time and GPU utilisation where sampled.
func EndMetrics(r jobreport.Report, end time.Time) []Metric {
	ts := end.UnixMilli()
	var out []Metric
	add := func(key string, v float64) { out = append(out, Metric{Key: KeyPrefix + key, Value: v, Timestamp: ts}) }
	if r.StartedAt != nil {
		ended := end
		if r.EndedAt != nil {
			ended = *r.EndedAt
		}
		add("wall_seconds", ended.Sub(*r.StartedAt).Seconds())
		if last, ok := lastTaskStart(r.Tasks); ok {
			add("all_tasks_running_seconds", last.Sub(*r.StartedAt).Seconds())
		}
	}
	add("restarts", float64(r.Restarts))
	for _, t := range r.Tasks {
		name := strings.ReplaceAll(t.Task, ":", "_") // a metric key has no ':'
		if t.ProcessSample != nil {
			add(name+".peak_rss_mib", float64(t.PeakRSSBytes)/(1<<20))
			add(name+".cpu_seconds", t.CPUSeconds)
		}
		for _, g := range t.GPUs {
			add(fmt.Sprintf("%s.gpu%d_utilization_pct", name, g.Index), float64(g.UtilizationPct))
		}
	}
	return out
}

// lastTaskStart is when the last task started, if every task did.
func lastTaskStart(tasks []jobreport.Task) (time.Time, bool) {
	var last time.Time
	for _, t := range tasks {
		if t.StartedAt == nil {
			return time.Time{}, false
		}
		if t.StartedAt.After(last) {
			last = *t.StartedAt
		}
	}
	return last, len(tasks) > 0
}

// LogEnd logs a job's end into its run: the run's status first when
// endRun (an AM killed meanwhile has logged what matters most; a joined
// run's status is its owner's, so endRun is false for it), then the final
// status and diagnostics as tags, EndMetrics, and the artifacts (name to
// content). It goes on past a failed step and returns every failure.
func (c *Client) LogEnd(ctx context.Context, runID string, r jobreport.Report, artifacts map[string][]byte, endRun bool) error {
	end := time.Now()
	if r.EndedAt != nil {
		end = *r.EndedAt
	}
	var errs []error
	if endRun {
		if err := c.SetTerminated(ctx, runID, EndStatus(r.FinalStatus), end); err != nil {
			errs = append(errs, fmt.Errorf("status: %w", err))
		}
	}
	tags := map[string]string{TagFinalStatus: r.FinalStatus}
	if r.Diagnostics != "" {
		tags[TagDiagnostics] = r.Diagnostics
	}
	if err := c.LogBatch(ctx, runID, nil, tags, EndMetrics(r, end)); err != nil {
		errs = append(errs, fmt.Errorf("metrics: %w", err))
	}
	if len(artifacts) > 0 {
		run, err := c.GetRun(ctx, runID)
		if err != nil {
			errs = append(errs, fmt.Errorf("artifacts: %w", err))
		}
		for name, data := range artifacts {
			if err != nil {
				break
			}
			if uerr := c.UploadArtifact(ctx, run, name, data); uerr != nil {
				errs = append(errs, fmt.Errorf("artifact %s: %w", name, uerr))
			}
		}
	}
	return errors.Join(errs...)
}
