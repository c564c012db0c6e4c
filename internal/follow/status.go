package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tfyarn/tfyarn/internal/buildinfo"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/containerexit"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/reqsign"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/jobreport"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Task changes an Event reports (Event.TaskChange).
const (
	TaskLaunched   = jobreport.TaskLaunched
	TaskRegistered = jobreport.TaskRegistered
	TaskEnded      = jobreport.TaskEnded
	TaskProgress   = jobreport.TaskProgress
)

// statusTimeout bounds one fetch of the AM's status page: it is a local
// JSON document, and a slow answer only means falling back to the report.
const statusTimeout = 3 * time.Second

// statusWatcher follows the AM's status page (contract.StatusPath) at the
// application report's host and rpc_port, the AM's HTTP port. Everything
// it learns is extra: when the page cannot be reached, Wait goes on with
// the application report alone.
type statusWatcher struct {
	hc  *http.Client
	key []byte // the job's status key (contract.StatusSigningKey)
	mu  sync.Mutex
	// url and appID (the signer of the requests) are set by locate and read
	// by watchForEnd's goroutine too (under mu).
	url   string
	appID string
	last  *contract.StatusReport
	// warning: the last report carried warnings (told when they began).
	warning bool
	// notice, if set, is told when the page stops answering (after it
	// did, silentPolls fetches in a row) and when it answers again.
	notice   func(string)
	failures int
	// explain, if set, adds to a waiting line what the client can learn
	// of it from the ResourceManager (who holds the GPUs awaited).
	explain func(line string) string
	// waits are the waiting lines seen: since when, and when last told.
	waits map[string]*waitSeen
	// told are the restart causes told, across AM attempts.
	told map[string]bool
	// nearMemory are the containers told near their memory limit.
	nearMemory map[string]bool
	// resultsTold are the lines of results not saved that were told.
	resultsTold map[string]bool
	// version is this client's (buildinfo's Label); versionTold says the
	// AM's other version was told, once for the whole follow.
	version     string
	versionTold bool
}

type waitSeen struct{ since, told time.Time }

// waitingEvery is how often a wait still under way is told again.
const waitingEvery = 30 * time.Second

// tellWaiting emits the waiting lines new since the last poll, and those
// last told waitingEvery ago; lines no longer listed are forgotten.
func (w *statusWatcher) tellWaiting(lines []string, emit func(Event)) {
	now := time.Now()
	seen := map[string]*waitSeen{}
	for _, line := range lines {
		ws := w.waits[line]
		if ws == nil {
			ws = &waitSeen{since: now}
		}
		seen[line] = ws
		if !ws.told.IsZero() && now.Sub(ws.told) < waitingEvery {
			continue
		}
		ws.told = now
		text := line
		if w.explain != nil {
			if more := w.explain(line); more != "" {
				text += "; " + more
			}
		}
		emit(Event{Time: now, Waiting: text, For: now.Sub(ws.since)})
	}
	w.waits = seen
}

func newStatusWatcher(key []byte) *statusWatcher {
	return &statusWatcher{key: key, version: buildinfo.Current().Label(), hc: &http.Client{
		Timeout: statusTimeout,
		// The AM is on the cluster's network, not behind the user's proxy.
		Transport: &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: statusTimeout}).DialContext},
		// The AM sends strangers to the RM's proxy; the client does not
		// follow (the proxy's page is HTML).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (w *statusWatcher) close() { w.hc.CloseIdleConnections() }

// locate learns the status page's address from an application report; the
// AM registers its HTTP port as its RPC port.
func (w *statusWatcher) locate(r *hadoopyarn.ApplicationReportProto) {
	host, port := r.GetHost(), r.GetRpcPort()
	if host == "" || host == "N/A" || port <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.url = "http://" + net.JoinHostPort(host, strconv.Itoa(int(port))) + contract.StatusPath
	w.appID = yarn.FormatApplicationID(r.GetApplicationId())
}

// target is where the page is and who signs the requests, for watchForEnd's
// goroutine.
func (w *statusWatcher) target() (page, signer string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.url, w.signer()
}

// watchForEnd asks the AM, request after request, to answer once the job's
// report is final (contract.StatusWaitFinal), and hands that report over on
// the channel it returns; it ends with ctx. An AM that answers at once (an
// older one, or one not answering) is asked again every interval, never faster.
func (w *statusWatcher) watchForEnd(ctx context.Context, interval time.Duration) <-chan *contract.StatusReport {
	ended := make(chan *contract.StatusReport, 1)
	go func() {
		for ctx.Err() == nil {
			began := time.Now()
			if page, signer := w.target(); page != "" {
				rep, err := w.fetchFrom(ctx, page+"?"+contract.StatusWaitParam+"="+contract.StatusWaitFinal, signer)
				if err == nil && rep.Final {
					ended <- rep
					return
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(interval - time.Since(began)):
			}
		}
	}()
	return ended
}

// poll fetches the page and emits an event per task change. Errors are
// dropped: the page is a bonus over the report.
func (w *statusWatcher) poll(ctx context.Context, appID string, onEvent func(Event)) {
	page, signer := w.target()
	if page == "" || (w.last != nil && w.last.Final) {
		return
	}
	rep, err := w.fetchFrom(ctx, page, signer)
	if err != nil && w.last != nil && ctx.Err() == nil {
		if w.failures++; w.failures == silentPolls && w.notice != nil {
			w.notice(fmt.Sprintf("ApplicationMaster at %s not answering (%s); following the ResourceManager's report", w.host(), shortCause(err)))
		}
	}
	if err != nil {
		return
	}
	w.apply(appID, rep, onEvent)
}

// apply takes a report fetched from the AM: an event per change since the
// last one.
func (w *statusWatcher) apply(appID string, rep *contract.StatusReport, onEvent func(Event)) {
	if rep.AppID != appID {
		return
	}
	if w.failures >= silentPolls && w.notice != nil {
		w.notice(fmt.Sprintf("ApplicationMaster at %s answering again", w.host()))
	}
	w.failures = 0
	if onEvent != nil {
		// A restart comes after what the attempts it ended did and before
		// the new attempts it brought, also when all of it happened since
		// the last report (a task that failed at once, say).
		var restarts []string
		for _, cause := range newRestarts(w.last, rep) {
			if w.told[cause] {
				continue // a later AM attempt lists the earlier ones' again
			}
			if w.told == nil {
				w.told = map[string]bool{}
			}
			w.told[cause] = true
			restarts = append(restarts, cause)
		}
		before, after := taskChanges(w.last, rep), []Event(nil)
		if len(restarts) > 0 {
			before, after = splitAtRestart(w.last, before)
		}
		for _, ev := range before {
			ev.AppID = appID
			onEvent(ev)
		}
		for _, cause := range restarts {
			onEvent(Event{Time: time.Now(), AppID: appID, Restart: cause})
		}
		for _, ev := range after {
			ev.AppID = appID
			onEvent(ev)
		}
		for _, ev := range progressChanges(w.last, rep) {
			ev.AppID = appID
			onEvent(ev)
		}
		w.tellWaiting(rep.Waiting, func(ev Event) { ev.AppID = appID; onEvent(ev) })
		if m := buildinfo.Mismatch(rep.TfyarnVersion, w.version); m != "" && !w.versionTold {
			w.versionTold = true
			onEvent(Event{Time: time.Now(), AppID: appID, Notice: m})
		}
		for _, line := range w.newNearMemory(rep) {
			onEvent(Event{Time: time.Now(), AppID: appID, NearMemory: line})
		}
		for _, line := range w.newResultWarnings(rep) {
			onEvent(Event{Time: time.Now(), AppID: appID, Warning: line})
		}
		// A warning is told when it begins (its figures change at every
		// report), and again once it has ended and begins anew.
		if len(rep.Warnings) > 0 && !w.warning {
			for _, text := range rep.Warnings {
				onEvent(Event{Time: time.Now(), AppID: appID, Notice: appID + " warning: " + text})
			}
		}
		w.warning = len(rep.Warnings) > 0
		for _, x := range rep.ExcludedNodes {
			if key := "excluded " + x.Host; !w.told[key] {
				if w.told == nil {
					w.told = map[string]bool{}
				}
				w.told[key] = true
				onEvent(Event{Time: time.Now(), AppID: appID, Notice: fmt.Sprintf("%s excluding node %s: %s", appID, x.Host, x.Reason)})
			}
		}
	}
	w.last = rep
}

// maxStatusBody bounds the AM's answer the client reads.
const maxStatusBody = 4 << 20

// ErrNotTheAM is an answer at the status page's address that is not the
// job's AM's: unsigned, or signed with another key than the job's.
var ErrNotTheAM = errors.New("the answer is not from the job's ApplicationMaster (unsigned or forged signature)")

// fetch asks the AM for its report with a fresh request signed with the
// status key, and believes only an answer signed over that request.
func (w *statusWatcher) fetch(ctx context.Context) (*contract.StatusReport, error) {
	page, signer := w.target()
	return w.fetchFrom(ctx, page, signer)
}

// fetchFrom is fetch at page, the request signed as signer.
func (w *statusWatcher) fetchFrom(ctx context.Context, page, signer string) (*contract.StatusReport, error) {
	if len(w.key) == 0 {
		// Without the key no answer can be checked: ask nothing.
		return nil, errors.New("client: no status key for the job's ApplicationMaster")
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, page, nil)
	if err != nil {
		return nil, err
	}
	key := contract.StatusSigningKey(w.key)
	signed, err := reqsign.NewRequest(contract.StatusRequestPurpose, http.MethodGet, req.URL.RequestURI(), signer, time.Now())
	if err != nil {
		return nil, err
	}
	sig := signed.Sign(key, nil, req.Header)
	resp, err := w.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("client: %s: %s", page, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBody+1))
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", page, err)
	}
	if len(body) > maxStatusBody {
		return nil, fmt.Errorf("client: %s: the answer is over %d MiB", page, maxStatusBody>>20)
	}
	if err := reqsign.CheckResponse(key, contract.StatusAnswerPurpose, sig, resp.StatusCode, resp.Header, body); err != nil {
		return nil, fmt.Errorf("client: %s: %w (%v)", page, ErrNotTheAM, err)
	}
	var rep contract.StatusReport
	if err := json.Unmarshal(body, &rep); err != nil {
		return nil, fmt.Errorf("client: %s: %w", page, err)
	}
	return &rep, nil
}

// signer names the client in its requests: the application it asks about.
func (w *statusWatcher) signer() string {
	if w.appID == "" {
		return "client"
	}
	return w.appID
}

// newNearMemory are the lines for the containers rep flags near their
// memory limit that were not told yet.
func (w *statusWatcher) newNearMemory(rep *contract.StatusReport) []string {
	var lines []string
	for _, t := range rep.Tasks {
		if !t.NearMemoryLimit || t.ProcessSample == nil || t.ContainerID == "" || w.nearMemory[t.ContainerID] {
			continue
		}
		if w.nearMemory == nil {
			w.nearMemory = map[string]bool{}
		}
		w.nearMemory[t.ContainerID] = true
		lines = append(lines, nearMemoryLine(t))
	}
	return lines
}

// newResultWarnings are the lines, not told yet, of the tasks whose result was not saved.
func (w *statusWatcher) newResultWarnings(rep *contract.StatusReport) []string {
	var lines []string
	for _, t := range rep.Tasks {
		if t.ResultNotSaved == "" || w.resultsTold[t.ResultNotSaved] {
			continue
		}
		if w.resultsTold == nil {
			w.resultsTold = map[string]bool{}
		}
		w.resultsTold[t.ResultNotSaved] = true
		lines = append(lines, t.ResultNotSaved)
	}
	return lines
}

// nearMemoryLine tells that t's program came near its container's memory.
func nearMemoryLine(t contract.TaskReport) string {
	return fmt.Sprintf("%s (container %s on %s) is near its memory limit: peak RSS %d MiB of the container's %d MiB; YARN kills the container beyond it (give --%s more memory)",
		t.Task, t.ContainerID, t.Node, t.PeakRSSBytes>>20, t.MemoryLimitBytes>>20, t.Type)
}

// tasks is the last task table seen, nil if none was.
func (w *statusWatcher) tasks() []jobreport.Task {
	if w.last == nil {
		return nil
	}
	return w.last.Tasks
}

// taskChanges compares two reports task by task, launches first, then
// registrations, then ends, so a poll that saw several steps tells them in
// the order they happened.
func taskChanges(prev, cur *contract.StatusReport) []Event {
	old := map[string]contract.TaskReport{}
	if prev != nil {
		for _, t := range prev.Tasks {
			old[t.Task] = t
		}
	}
	var launched, registered, ended []Event
	counts := (cur.Counts)
	for _, t := range cur.Tasks {
		p := old[t.Task]
		if p.Attempt != t.Attempt {
			// A new attempt: registered and ended anew. Its container is new
			// only once it has one: a task back to pending still names the
			// container it failed in.
			p = contract.TaskReport{ContainerID: p.ContainerID}
		}
		task := t
		ev := Event{Time: time.Now(), Task: &task, Counts: &counts}
		if t.ContainerID != "" && p.ContainerID != t.ContainerID && t.State != "pending" {
			ev.TaskChange = TaskLaunched
			launched = append(launched, ev)
		}
		if t.Host != "" && (p.Host != t.Host || p.Port != t.Port) {
			reg := ev
			reg.TaskChange = TaskRegistered
			if t.Type == string(taskspec.TensorBoard) {
				reg.TensorBoardURL = contract.TensorBoardURL(t.Host, t.Port)
			}
			registered = append(registered, reg)
		}
		if t.ExitCode != nil && p.ExitCode == nil {
			end := ev
			end.TaskChange = TaskEnded
			end.Exit = containerexit.FromFailure(t.Failure, *t.ExitCode)
			ended = append(ended, end)
		}
	}
	evs := append(append(launched, registered...), ended...)
	var before jobreport.Counts
	if prev != nil {
		before = (prev.Counts)
	}
	countsAtEvents(before, counts, evs)
	return evs
}

// splitAtRestart parts task changes around restarts: those of the attempts
// prev knew (a launch and failure the client had not seen yet) happened
// before, those of new attempts after; each part keeps its order.
func splitAtRestart(prev *contract.StatusReport, evs []Event) (before, after []Event) {
	for _, ev := range evs {
		if ev.Task.Attempt == attemptIn(prev, ev.Task.Task) {
			before = append(before, ev)
		} else {
			after = append(after, ev)
		}
	}
	return before, after
}

// attemptIn is task's attempt in rep; 0 when rep does not list it.
func attemptIn(rep *contract.StatusReport, task string) int {
	if rep != nil {
		for _, t := range rep.Tasks {
			if t.Task == task {
				return t.Attempt
			}
		}
	}
	return 0
}

// progressChanges are the tasks whose program reported new progress (TFYARN_PROGRESS_FILE) since
// prev, as TaskProgress events.
func progressChanges(prev, cur *contract.StatusReport) []Event {
	old := map[string]*jobreport.Progress{}
	if prev != nil {
		for _, t := range prev.Tasks {
			old[t.Task] = t.Progress
		}
	}
	var evs []Event
	for _, t := range cur.Tasks {
		if t.Progress == nil || (old[t.Task] != nil && *old[t.Task] == *t.Progress) {
			continue
		}
		task := t
		evs = append(evs, Event{Time: time.Now(), Task: &task, TaskChange: TaskProgress})
	}
	return evs
}

// newRestarts are the restart causes cur lists beyond those prev did.
func newRestarts(prev, cur *contract.StatusReport) []string {
	seen := 0
	if prev != nil {
		seen = len(prev.RestartCauses)
	}
	if len(cur.RestartCauses) <= seen {
		return nil
	}
	return cur.RestartCauses[seen:]
}

// host is the status page's host:port.
func (w *statusWatcher) host() string {
	if u, err := url.Parse(w.url); err == nil {
		return u.Host
	}
	return w.url
}
