package submit

import (
	"context"
	"time"

	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// orphanGrace is how old the staging directory of an application the RM
// does not know must be before it counts as orphaned: another submission
// creates its staging directory a moment before submitting, while the RM
// does not know its application yet.
const orphanGrace = 10 * time.Minute

// orphanBudget bounds the cleanup a submission does on its way.
const orphanBudget = 10 * time.Second

// Orphan is the staging directory of an application that ended (the
// client and the AM that would have removed it died):
// client.Orphan.
type Orphan struct {
	AppID string
	Path  string
	// State is the application's final state per the RM, or "unknown"
	// (the RM forgot it, or it ran on an earlier incarnation of the RM).
	State string
}

// stagingOrphaned decides one staging directory: state is the RM's
// answer (known false: the RM does not know the application), rmStart the
// RM's cluster timestamp, age the directory's.
func stagingOrphaned(id *hadoopyarn.ApplicationIdProto, known bool, state hadoopyarn.YarnApplicationStateProto, rmStart int64, age time.Duration) (bool, string) {
	if known {
		return yarn.IsTerminal(state), yarn.AppStateName(state)
	}
	// Unknown: an earlier RM's application has ended; one of this RM's
	// may be a submission in progress, unless it is old.
	if rmStart != 0 && id.GetClusterTimestamp() < rmStart {
		return true, "unknown"
	}
	return age >= orphanGrace, "unknown"
}

// FindOrphans lists the user's staging directories whose
// applications have ended, asking the RM about each; rmStart is the RM's
// cluster timestamp (0 if not known). remove deletes them as well. It
// never touches the directory of an application the RM reports as
// running or accepted, nor one it could not ask about.
func FindOrphans(ctx context.Context, rm *yarn.ApplicationClient, fs *hdfs.FS, rmStart int64, remove bool) ([]Orphan, error) {
	entries, err := fs.ListStaging(ctx)
	if err != nil {
		return nil, err
	}
	var out []Orphan
	for _, e := range entries {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		id, err := yarn.ParseApplicationID(e.AppID)
		if err != nil {
			continue
		}
		known := true
		r, err := rm.GetApplicationReport(ctx, id)
		switch {
		case yarn.IsApplicationNotFound(err):
			known = false
		case err != nil:
			continue // cannot tell: leave it
		}
		ok, state := stagingOrphaned(id, known, r.GetYarnApplicationState(), rmStart, time.Since(e.ModTime))
		if !ok {
			continue
		}
		if remove {
			if err := fs.RemoveStaging(ctx, e.AppID); err != nil {
				return out, err
			}
		}
		out = append(out, Orphan{AppID: e.AppID, Path: e.Path, State: state})
	}
	return out, nil
}

// cleanOrphans removes orphaned staging directories on a submission's
// way, within orphanBudget; errors only stop it.
func (s *Submission) cleanOrphans(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, orphanBudget)
	defer cancel()
	s.OrphansRemoved, _ = FindOrphans(ctx, s.RM, s.FS, s.ID.GetClusterTimestamp(), true)
}
