package follow

import (
	"context"
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// attemptWatcher follows the ApplicationMaster's attempts in the RM's
// reports: YARN starts a new attempt (up to Job.AMAttempts) when one dies,
// and Wait keeps following the application across them.
type attemptWatcher struct {
	current int32 // the attempt last seen; 0 before the first report names one
}

// observe returns a notice for the user when r names a later attempt than
// the last report did: the new attempt's number and why the previous one
// ended, in the words of its attempt report (why(prev); "" if unknown).
func (a *attemptWatcher) observe(r *hadoopyarn.ApplicationReportProto, why func(prev int32) string) string {
	n := r.GetCurrentApplicationAttemptId().GetAttemptId()
	if n <= a.current {
		return ""
	}
	prev := a.current
	a.current = n
	if prev == 0 {
		if n == 1 {
			return ""
		}
		// Watching began after an attempt had already ended.
		prev = n - 1
	}
	reason := oneLine(why(prev))
	if reason == "" {
		return fmt.Sprintf("ApplicationMaster attempt %d started after attempt %d ended", n, prev)
	}
	return fmt.Sprintf("ApplicationMaster attempt %d started after attempt %d ended: %s", n, prev, reason)
}

// attemptDiagnostics is why an ended attempt ended, from its attempt
// report; "" when the RM does not say.
func (s *Follower) attemptDiagnostics(ctx context.Context, attempt int32) string {
	cctx, cancel := s.call(ctx)
	defer cancel()
	r, err := s.RM.GetApplicationAttemptReport(cctx, s.ID, attempt)
	if err != nil || r.GetDiagnostics() == "N/A" {
		return ""
	}
	return r.GetDiagnostics()
}

// oneLine joins a multi-line diagnostic into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
