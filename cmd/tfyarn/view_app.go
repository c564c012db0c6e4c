package main

import (
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/tfyarn/tfyarn/jobreport"
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

func newAppView(a client.Application) appView {
	tags := a.Tags
	if tags == nil {
		tags = []string{}
	}
	return appView{
		ID:           a.ID,
		Name:         a.Name,
		Type:         a.Type,
		User:         a.User,
		Queue:        a.Queue,
		Priority:     a.Priority,
		State:        a.State,
		FinalStatus:  a.FinalStatus,
		Progress:     round(a.Progress, 4),
		TrackingURL:  a.TrackingURL,
		StartTime:    timeText(a.StartTime),
		StartTimeMS:  epochMS(a.StartTime),
		FinishTime:   timeText(a.FinishTime),
		FinishTimeMS: epochMS(a.FinishTime),
		Diagnostics:  a.Diagnostics,
		Tags:         tags,
	}
}

// timeText renders an RM timestamp; zero (the RM's "not yet") is null.
func timeText(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

// epochMS is the RM's own form of a timestamp: epoch milliseconds, 0 for
// "not yet".
func epochMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
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
	History      *jobreport.Report `json:"history,omitempty"`
	Live         *jobreport.Report `json:"live,omitempty"`
	HistoryError string            `json:"history_error,omitempty"`
}

// addJobKeys adds what the history says of the job to status's key-values.
func addJobKeys(kv *cliout.KeyValues, h *jobreport.Report) {
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
		kv.Add("Training", progressText(h.Progress))
	}
	kv.Add("Restarts", strconv.Itoa(h.Restarts))
	for _, w := range h.Warnings {
		kv.Add("Warning", w)
	}
	for _, x := range h.ExcludedNodes {
		kv.Add("Excluded-Node", x.Host+": "+x.Reason)
	}
	for _, w := range h.Waiting {
		kv.Add("Waiting", w)
	}
	if h.TensorBoardURL != "" {
		kv.Add("TensorBoard", h.TensorBoardURL)
	}
	if h.TfyarnVersion != "" {
		kv.Add("Tfyarn-Version", h.TfyarnVersion)
	}
}

// taskTable is a report's tasks (history or live), one row each.
func taskTable(h *jobreport.Report) *cliout.Table {
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
			elapsed = cliout.Duration(end.Sub(*tr.StartedAt))
		}
		t.Row(tr.Task, tr.State, addr, orDash(nonEmpty(tr.ContainerID)), orDash(nonEmpty(tr.Node)), exit, tr.Restarts, elapsed, processText(tr), gpuText(tr.GPUs))
	}
	return t
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// The report's cells (cliout's words, as on the AM's page) over the public
// report's types.

func processText(t jobreport.Task) string {
	p := t.ProcessSample
	if p == nil {
		return cliout.ProcessText(nil)
	}
	return cliout.ProcessText(&cliout.Process{CPUPercent: p.CPUPercent, RSSBytes: p.RSSBytes, PeakRSSBytes: p.PeakRSSBytes,
		NearMemoryLimit: t.NearMemoryLimit, MemoryLimitBytes: t.MemoryLimitBytes})
}

func gpuText(gpus []jobreport.GPUSample) string {
	cells := make([]cliout.GPU, len(gpus))
	for i, g := range gpus {
		cells[i] = cliout.GPU{Index: g.Index, UtilizationPct: g.UtilizationPct, MemoryUsedMiB: g.MemoryUsedMiB, MemoryTotalMiB: g.MemoryTotalMiB}
	}
	return cliout.GPUText(cells)
}

func progressText(p *jobreport.JobProgress) string {
	if p == nil {
		return cliout.ProgressText(nil)
	}
	return cliout.ProgressText(&cliout.Progress{Fraction: p.Fraction, Step: p.Step, Total: p.Total, Task: p.Task,
		StepsPerSecond: p.StepsPerSecond, FractionPerSecond: p.FractionPerSecond, ETASeconds: p.ETASeconds})
}
