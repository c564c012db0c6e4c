package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// An application report as Application (cmd/tfyarn's TestAppViewJSONShape
// checks the same one in status's and list's JSON).
func TestApplicationFromReport(t *testing.T) {
	id, err := yarn.ParseApplicationID("application_1700000000000_0042")
	require.NoError(t, err)
	r := &hadoopyarn.ApplicationReportProto{
		ApplicationId:          id,
		User:                   proto.String("alice"),
		Queue:                  proto.String("ml-gpu"),
		Name:                   proto.String("mnist"),
		ApplicationType:        proto.String("TENSORFLOW"),
		YarnApplicationState:   hadoopyarn.YarnApplicationStateProto_RUNNING.Enum(),
		FinalApplicationStatus: hadoopyarn.FinalApplicationStatusProto_APP_UNDEFINED.Enum(),
		Progress:               proto.Float32(0.6),
		TrackingUrl:            proto.String("http://rm:8088/proxy/application_1700000000000_0042/?a=1&b=2"),
		StartTime:              proto.Int64(1700000000123),
		Priority:               &hadoopyarn.PriorityProto{Priority: proto.Int32(7)},
	}
	require.Equal(t, &Application{
		ID: "application_1700000000000_0042", User: "alice", Queue: "ml-gpu", Name: "mnist", Type: "TENSORFLOW",
		State: "RUNNING", FinalStatus: "UNDEFINED", Progress: float64(float32(0.6)),
		TrackingURL: "http://rm:8088/proxy/application_1700000000000_0042/?a=1&b=2",
		StartTime:   time.UnixMilli(1700000000123), Priority: 7, Diagnostics: "N/A",
	}, newApplication(r))
	require.False(t, newApplication(r).Ended())
}
