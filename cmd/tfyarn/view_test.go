package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
)

// The application as client reports it (client's TestApplicationFromReport
// makes the same one of the ResourceManager's report), in status's and
// list's JSON.
func TestAppViewJSONShape(t *testing.T) {
	a := client.Application{
		ID: "application_1700000000000_0042", User: "alice", Queue: "ml-gpu", Name: "mnist", Type: "TENSORFLOW",
		State: "RUNNING", FinalStatus: "UNDEFINED",
		Progress:    float64(float32(0.6)), // as the RM sends it
		TrackingURL: "http://rm:8088/proxy/application_1700000000000_0042/?a=1&b=2",
		StartTime:   time.UnixMilli(1700000000123), Priority: 7, Diagnostics: "N/A",
	}
	var buf bytes.Buffer
	require.NoError(t, cliout.JSON(&buf, newAppView(a)))
	require.JSONEq(t, `{
		"id": "application_1700000000000_0042", "name": "mnist", "type": "TENSORFLOW", "user": "alice",
		"queue": "ml-gpu", "priority": 7, "state": "RUNNING", "final_status": "UNDEFINED", "progress": 0.6,
		"tracking_url": "http://rm:8088/proxy/application_1700000000000_0042/?a=1&b=2",
		"start_time": "2023-11-14T22:13:20.123Z", "start_time_ms": 1700000000123,
		"finish_time": null, "finish_time_ms": 0, "diagnostics": "N/A", "tags": []}`, buf.String())
	require.Contains(t, buf.String(), "a=1&b=2", "no HTML escaping")
}
