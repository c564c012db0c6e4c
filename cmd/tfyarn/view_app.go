package main

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/appmaster/webui"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// appView is the JSON shape of one application, in `tfyarn status --output
// json` (the whole document) and `tfyarn list --output json` (each element of
// "applications"). Keys are stable; times are RFC 3339 UTC, or null when the
// RM has not set them (finish_time while running); *_ms are the RM's epoch
// milliseconds (0 when unset).
//
//	{"id": "application_1700000000000_0001", "name": "train", "type": "TENSORFLOW",
//	 "user": "alice", "queue": "default", "priority": 0, "state": "RUNNING", "final_status": "UNDEFINED",
//	 "progress": 0.5, "tracking_url": "http://...", "start_time": "2024-...Z", "start_time_ms": 1700000000123,
//	 "finish_time": null, "finish_time_ms": 0, "diagnostics": "", "tags": []}
type appView struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Type         string   `json:"type"`
	User         string   `json:"user"`
	Queue        string   `json:"queue"`
	Priority     int32    `json:"priority"`
	State        string   `json:"state"`
	FinalStatus  string   `json:"final_status"`
	Progress     float64  `json:"progress"`
	TrackingURL  string   `json:"tracking_url"`
	StartTime    *string  `json:"start_time"`
	StartTimeMS  int64    `json:"start_time_ms"`
	FinishTime   *string  `json:"finish_time"`
	FinishTimeMS int64    `json:"finish_time_ms"`
	Diagnostics  string   `json:"diagnostics"`
	Tags         []string `json:"tags"`
}

func newAppView(r *hadoopyarn.ApplicationReportProto) appView {
	tags := r.GetApplicationTags()
	if tags == nil {
		tags = []string{}
	}
	return appView{
		ID:           yarn.FormatApplicationID(r.GetApplicationId()),
		Name:         r.GetName(),
		Type:         r.GetApplicationType(),
		User:         r.GetUser(),
		Queue:        r.GetQueue(),
		Priority:     r.GetPriority().GetPriority(),
		State:        yarn.AppStateName(r.GetYarnApplicationState()),
		FinalStatus:  yarn.FinalStatusName(r.GetFinalApplicationStatus()),
		Progress:     round(float64(r.GetProgress()), 4),
		TrackingURL:  r.GetTrackingUrl(),
		StartTime:    epochMS(r.GetStartTime()),
		StartTimeMS:  r.GetStartTime(),
		FinishTime:   epochMS(r.GetFinishTime()),
		FinishTimeMS: r.GetFinishTime(),
		Diagnostics:  r.GetDiagnostics(),
		Tags:         tags,
	}
}

// epochMS renders an RM timestamp; the RM uses 0 for "not yet".
func epochMS(ms int64) *string {
	if ms <= 0 {
		return nil
	}
	s := time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
	return &s
}

// round trims float32 noise (0.6 arrives as 0.60000002384) so JSON shows
// what the RM meant.
func round(f float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(f*p) / p
}

func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// statusView is `tfyarn status --output json`: the application as the RM
// reports it, plus, once it ended, its AM's history record (or why there
// is none), or while it runs, the AM's live report.
type statusView struct {
	appView
	History      *contract.StatusReport `json:"history,omitempty"`
	Live         *contract.StatusReport `json:"live,omitempty"`
	HistoryError string                 `json:"history_error,omitempty"`
}

// readHistory reads the history record the application's AM left on HDFS;
// the error is one line for users (a non-tfyarn application has none).
func (e *env) readHistory(ctx context.Context, user, appID string) (*contract.StatusReport, string) {
	var rep contract.StatusReport
	err := e.withHDFS(ctx, func(fs *hdfs.FS) error {
		data, err := fs.ReadHistory(ctx, user, appID)
		if err != nil {
			return err
		}
		return json.Unmarshal(data, &rep)
	})
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, "no history record at " + hdfs.HistoryPath(user, appID) + " (not a tfyarn application, or its AM did not end normally)"
	case errors.Is(err, os.ErrPermission):
		return nil, "the history record at " + hdfs.HistoryPath(user, appID) + " is private to " + user + " (the command line and stderr tails are theirs)"
	case err != nil:
		return nil, "reading the history record: " + err.Error()
	}
	return &rep, ""
}

// addJobKeys adds what the history says of the job to status's key-values.
func addJobKeys(kv *cliout.KeyValues, h *contract.StatusReport) {
	if j := h.Job; j != nil {
		kv.Add("Command", cliout.Cell(j.Command))
		groups := make([]string, len(j.Groups))
		for i, g := range j.Groups {
			groups[i] = "--" + g.Type + " " + g.Spec
			if g.NodeLabel != "" {
				groups[i] += " (label " + g.NodeLabel + ")"
			}
		}
		kv.Add("Tasks", strings.Join(groups, ", "))
		if j.NodeLabel != "" {
			kv.Add("Node-Label", j.NodeLabel)
		}
	}
	if h.Progress != nil {
		kv.Add("Training", webui.ProgressText(h.Progress))
	}
	kv.Add("Restarts", strconv.Itoa(h.Restarts))
	if h.TensorBoardURL != "" {
		kv.Add("TensorBoard", h.TensorBoardURL)
	}
}

// taskTable is a report's tasks (history or live), one row each.
func taskTable(h *contract.StatusReport) *cliout.Table {
	t := cliout.NewTable("TASK", "STATE", "ADDRESS", "CONTAINER", "NODE", "EXIT", "RESTARTS", "ELAPSED", "CPU/MEMORY", "GPUS")
	for _, tr := range h.Tasks {
		addr, exit, elapsed := "-", "-", "-"
		if tr.Host != "" {
			addr = net.JoinHostPort(tr.Host, strconv.Itoa(tr.Port))
		}
		if tr.ExitCode != nil {
			exit = strconv.Itoa(int(*tr.ExitCode))
		}
		if tr.StartedAt != nil {
			end := time.Now()
			if tr.EndedAt != nil {
				end = *tr.EndedAt
			}
			elapsed = webui.Duration(end.Sub(*tr.StartedAt))
		}
		t.Row(tr.Task, tr.State, addr, orDash(nonEmpty(tr.ContainerID)), orDash(nonEmpty(tr.Node)), exit, tr.Restarts, elapsed, webui.ProcessText(tr), webui.GPUText(tr.GPUs))
	}
	return t
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
