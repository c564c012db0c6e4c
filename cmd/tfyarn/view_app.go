package main

import (
	"math"
	"time"

	"github.com/tfyarn/tfyarn/yarn"
	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
)

// appView is the JSON shape of one application, in `tfyarn status --output
// json` (the whole document) and `tfyarn list --output json` (each element of
// "applications"). Keys are stable; times are RFC 3339 UTC, or null when the
// RM has not set them (finish_time while running); *_ms are the RM's epoch
// milliseconds (0 when unset).
//
//	{"id": "application_1700000000000_0001", "name": "train", "type": "TENSORFLOW",
//	 "user": "alice", "queue": "default", "state": "RUNNING", "final_status": "UNDEFINED",
//	 "progress": 0.5, "tracking_url": "http://...", "start_time": "2024-...Z", "start_time_ms": 1700000000123,
//	 "finish_time": null, "finish_time_ms": 0, "diagnostics": "", "tags": []}
type appView struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Type         string   `json:"type"`
	User         string   `json:"user"`
	Queue        string   `json:"queue"`
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
