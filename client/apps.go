package client

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/explain"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// ApplicationIDForm is the textual form of an application id, for messages
// that tell users what was expected.
const ApplicationIDForm = yarn.ApplicationIDForm

// Application is a YARN application as the ResourceManager reports it.
type Application struct {
	ID          string
	Name        string
	Type        string // application type, e.g. TENSORFLOW
	User        string
	Queue       string
	Priority    int32
	State       string // NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED
	FinalStatus string // UNDEFINED until the end, then SUCCEEDED, FAILED or KILLED
	Progress    float64
	TrackingURL string
	// StartTime and FinishTime are zero until the ResourceManager set them
	// (FinishTime while the application runs).
	StartTime   time.Time
	FinishTime  time.Time
	Diagnostics string
	Tags        []string
	// SubmitTime and LaunchTime are when the application was submitted and
	// its ApplicationMaster's container launched (zero until then): the
	// difference is its wait in the queue.
	SubmitTime, LaunchTime time.Time
	// ResourceSeconds are what the ResourceManager accounted to the
	// application, per resource type ("memory-mb" in MiB-seconds,
	// "vcores", "yarn.io/gpu"): each container's resources times its
	// lifetime; PreemptedResourceSeconds those of its preempted
	// containers. Nil when the RM reports none.
	ResourceSeconds, PreemptedResourceSeconds map[string]int64
}

// Ended reports whether the application reached a final state (FINISHED,
// FAILED or KILLED).
func (a *Application) Ended() bool {
	s, err := yarn.ParseAppState(a.State)
	return err == nil && yarn.IsTerminal(s)
}

func newApplication(r *hadoopyarn.ApplicationReportProto) *Application {
	return &Application{
		ID:          yarn.FormatApplicationID(r.GetApplicationId()),
		Name:        r.GetName(),
		Type:        r.GetApplicationType(),
		User:        r.GetUser(),
		Queue:       r.GetQueue(),
		Priority:    r.GetPriority().GetPriority(),
		State:       yarn.AppStateName(r.GetYarnApplicationState()),
		FinalStatus: yarn.FinalStatusName(r.GetFinalApplicationStatus()),
		Progress:    float64(r.GetProgress()),
		TrackingURL: r.GetTrackingUrl(),
		StartTime:   epochMS(r.GetStartTime()),
		FinishTime:  epochMS(r.GetFinishTime()),
		Diagnostics: r.GetDiagnostics(),
		Tags:        r.GetApplicationTags(),
		SubmitTime:  epochMS(r.GetSubmitTime()),
		LaunchTime:  epochMS(r.GetLaunchTime()),

		ResourceSeconds:          resourceMap(r.GetAppResource_Usage().GetApplicationResourceUsageMap()),
		PreemptedResourceSeconds: resourceMap(r.GetAppResource_Usage().GetApplicationPreemptedResourceUsageMap()),
	}
}

// resourceMap is an RM resource-seconds map; nil when empty.
func resourceMap(entries []*hadoopyarn.StringLongMapProto) map[string]int64 {
	if len(entries) == 0 {
		return nil
	}
	out := make(map[string]int64, len(entries))
	for _, e := range entries {
		out[e.GetKey()] = e.GetValue()
	}
	return out
}

// epochMS is an RM timestamp; the RM uses 0 for "not yet".
func epochMS(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// CheckApplicationID refuses a malformed application id (see
// ApplicationIDForm) before anything is asked of the cluster.
func CheckApplicationID(id string) error {
	_, err := yarn.ParseApplicationID(id)
	return err
}

// ApplicationStates are the states ListOptions.States takes.
func ApplicationStates() []string { return yarn.AppStateNames() }

// ListOptions selects the applications List returns; empty fields do not
// filter, but for States and AllUsers.
type ListOptions struct {
	// States are application states (ApplicationStates, any case); empty
	// means the active ones (NEW through RUNNING), "ALL" every state.
	States []string
	// AllUsers lists every user's applications, not only the client's.
	AllUsers bool
	Queues   []string
	Types    []string // application types, e.g. TENSORFLOW
}

// List returns the applications matching opts, newest first.
func (c *Client) List(ctx context.Context, opts ListOptions) ([]Application, error) {
	f := yarn.ApplicationFilter{States: yarn.ActiveAppStates, Queues: opts.Queues, Types: opts.Types}
	if len(opts.States) > 0 {
		f.States = nil
	}
	for _, name := range opts.States {
		if strings.EqualFold(name, "ALL") {
			f.States = nil
			break
		}
		s, err := yarn.ParseAppState(name)
		if err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
		f.States = append(f.States, s)
	}
	rm, err := c.session.RM()
	if err != nil {
		return nil, err
	}
	if !opts.AllUsers {
		f.Users = []string{rm.User()}
	}
	reports, err := rm.GetApplications(ctx, f)
	if err != nil {
		return nil, err
	}
	sortNewestFirst(reports)
	apps := make([]Application, 0, len(reports))
	for _, r := range reports {
		apps = append(apps, *newApplication(r))
	}
	return apps, nil
}

// sortNewestFirst orders reports by application id, newest first, the
// order people scan a list in; the RM's own order is a hash map's.
func sortNewestFirst(reports []*hadoopyarn.ApplicationReportProto) {
	sort.SliceStable(reports, func(i, j int) bool {
		a, b := reports[i].GetApplicationId(), reports[j].GetApplicationId()
		if a.GetClusterTimestamp() != b.GetClusterTimestamp() {
			return a.GetClusterTimestamp() > b.GetClusterTimestamp()
		}
		return a.GetId() > b.GetId()
	})
}

// Application asks the ResourceManager for one application's report.
func (c *Client) Application(ctx context.Context, appID string) (*Application, error) {
	r, err := c.report(ctx, appID)
	if err != nil {
		return nil, err
	}
	return newApplication(r), nil
}

func (c *Client) report(ctx context.Context, appID string) (*hadoopyarn.ApplicationReportProto, error) {
	id, err := yarn.ParseApplicationID(appID)
	if err != nil {
		return nil, err
	}
	rm, err := c.session.RM()
	if err != nil {
		return nil, err
	}
	return rm.GetApplicationReport(ctx, id)
}

// Kill asks the ResourceManager to kill the application, saying reason in
// its diagnostics, and waits until it ended or ctx ends; an application
// that had already ended is left as it is. The report is the last one
// seen, also with an error when there was one (the application still
// running when ctx ended).
func (c *Client) Kill(ctx context.Context, appID, reason string) (_ *Application, err error) {
	defer explain.AboutApp(&err, appID)
	id, err := yarn.ParseApplicationID(appID)
	if err != nil {
		return nil, err
	}
	rm, err := c.session.RM()
	if err != nil {
		return nil, err
	}
	r, err := rm.KillApplication(ctx, id, reason)
	if r == nil {
		return nil, err
	}
	return newApplication(r), err
}
