package follow

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

func reportOfAttempt(n int32) *hadoopyarn.ApplicationReportProto {
	return &hadoopyarn.ApplicationReportProto{CurrentApplicationAttemptId: &hadoopyarn.ApplicationAttemptIdProto{AttemptId: proto.Int32(n)}}
}

// Wait tells the user once per new ApplicationMaster attempt, with the
// previous attempt's end in one line; attempt 1, repeats and reports that
// name no attempt say nothing.
func TestAttemptWatcher(t *testing.T) {
	asked := []int32{}
	why := func(prev int32) string {
		asked = append(asked, prev)
		return "AM Container for appattempt_1_0001_000001 exited with  exitCode: 137\nFailing this attempt."
	}
	var a attemptWatcher
	require.Empty(t, a.observe(&hadoopyarn.ApplicationReportProto{}, why))
	require.Empty(t, a.observe(reportOfAttempt(1), why))
	require.Empty(t, a.observe(reportOfAttempt(1), why))
	require.Equal(t, "ApplicationMaster attempt 2 started after attempt 1 ended: AM Container for appattempt_1_0001_000001 exited with exitCode: 137 Failing this attempt.",
		a.observe(reportOfAttempt(2), why))
	require.Empty(t, a.observe(reportOfAttempt(2), why))
	require.Equal(t, []int32{1}, asked)
	require.EqualValues(t, 2, a.current)

	// Watching from attempt 3 on; the RM has no reason to give.
	var b attemptWatcher
	require.Equal(t, "ApplicationMaster attempt 3 started after attempt 2 ended",
		b.observe(reportOfAttempt(3), func(int32) string { return "" }))
}
