package tasklogs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/tasklogs/aggregated"
	"github.com/tfyarn/tfyarn/internal/tasklogs/nodemanager"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// defaultFollowFiles are the files followed when none is named.
var defaultFollowFiles = []string{"stdout", "stderr"}

// liveLogs reads a running application's logs from its NodeManagers.
type liveLogs struct {
	src   Sources
	req   Request
	id    *hadoopyarn.ApplicationIdProto
	notes func(string)
	nm    *nodemanager.Client
	http  map[string]string // NodeId -> NodeManager web address
	key   []byte            // the job's status key, once read
}

// statusKey reads the job's status key from its owner's staging directory.
func (l *liveLogs) statusKey(ctx context.Context, r *hadoopyarn.ApplicationReportProto) ([]byte, error) {
	if l.src.HDFS == nil {
		return nil, errors.New("no HDFS to read the job's status key from")
	}
	fs, err := l.src.HDFS(ctx)
	if err != nil {
		return nil, err
	}
	return l.src.StatusKey(ctx, fs, r)
}

// nodeHTTP is a node's NodeManager web address, from the RM's node reports.
func nodeHTTP(ctx context.Context, rm *yarn.ApplicationClient, limit time.Duration, cache map[string]string, node string) (string, error) {
	if a, ok := cache[node]; ok {
		return a, nil
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	nodes, err := rm.GetClusterNodes(cctx)
	if err != nil {
		return "", err
	}
	for _, n := range nodes {
		cache[yarn.FormatNodeID(n.GetNodeId())] = n.GetHttpAddress()
	}
	if a, ok := cache[node]; ok && a != "" {
		return a, nil
	}
	return "", fmt.Errorf("tasklogs: node %s is not in the ResourceManager's node list", node)
}

// containers are the application's task containers the request selects,
// from the AM's status page.
func (l *liveLogs) containers(ctx context.Context, r *hadoopyarn.ApplicationReportProto) ([]taskContainer, error) {
	if l.key == nil {
		key, err := l.statusKey(ctx, r)
		if err != nil {
			return nil, &UnavailableError{AppID: l.req.AppID, Reason: "its tasks' containers are on its ApplicationMaster's status page, which answers the job's owner only (" + err.Error() + ")"}
		}
		l.key = key
	}
	st, err := l.src.Status(ctx, r, l.key)
	if err != nil {
		return nil, &UnavailableError{AppID: l.req.AppID, Retry: true, Reason: "its ApplicationMaster's status page cannot be read (" + err.Error() + "), so its tasks' containers are unknown; try again in a moment"}
	}
	return selectTasks(l.req, st)
}

func selectTasks(req Request, st *contract.StatusReport) ([]taskContainer, error) {
	var out []taskContainer
	var names []string
	known := false
	for _, t := range st.Tasks {
		names = append(names, t.Task)
		if !req.wantTask(t.Task) {
			continue
		}
		known = true
		if t.ContainerID != "" {
			out = append(out, taskContainer{task: t.Task, container: t.ContainerID, node: t.Node})
		}
	}
	if req.Task != "" && !known {
		return nil, &UnavailableError{AppID: req.AppID, Reason: "it has no task " + req.Task + " (its tasks: " + strings.Join(names, ", ") + ")"}
	}
	if len(out) == 0 && req.Task != "" {
		return nil, &UnavailableError{AppID: req.AppID, Retry: true, Reason: "task " + req.Task + " has no container yet; try again in a moment"}
	}
	return out, nil
}

// print writes each selected file of each selected container as `yarn
// logs` prints a running container's logs.
func (l *liveLogs) print(ctx context.Context, r *hadoopyarn.ApplicationReportProto, out io.Writer) error {
	l.nm = nodemanager.New(r.GetUser())
	defer l.nm.Close()
	l.http = map[string]string{}
	tcs, err := l.containers(ctx, r)
	if err != nil {
		return err
	}
	found := false
	for _, tc := range tcs {
		addr, err := nodeHTTP(ctx, l.src.RM, l.req.CallTimeout, l.http, tc.node)
		if err != nil {
			return err
		}
		files, err := l.nm.List(ctx, addr, tc.container)
		if err != nil {
			if nodemanager.UnknownContainer(err) {
				l.notes(fmt.Sprintf("%s (%s): its NodeManager at %s no longer has its logs (the container ended; they will be in the aggregated logs once the application ends)", tc.task, tc.container, addr))
				continue
			}
			return fmt.Errorf("tasklogs: logs of %s (%s) at %s: %w", tc.task, tc.container, addr, err)
		}
		sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
		for _, f := range files {
			if !l.req.wantFile(f.Name) {
				continue
			}
			p, err := l.nm.Tail(ctx, addr, tc.container, f.Name, 0)
			if err != nil {
				return fmt.Errorf("tasklogs: %s of %s (%s) at %s: %w", f.Name, tc.task, tc.container, addr, nodemanager.Explain(err))
			}
			found = true
			data := p.Data
			if l.req.Tail > 0 {
				data = nodemanager.LastLines(data, l.req.Tail)
			} else if p.Offset > 0 {
				l.notes(fmt.Sprintf("%s of %s: only its last %d of %d bytes are shown", f.Name, tc.task, len(p.Data), p.Length))
			}
			if err := aggregated.WriteHeader(out, tc.container, tc.node, aggregated.Local, f.Name, f.Modified, p.Length); err != nil {
				return err
			}
			if _, err := out.Write(data); err != nil {
				return err
			}
			if err := aggregated.WriteFooter(out, f.Name); err != nil {
				return err
			}
		}
	}
	if !found {
		return &UnavailableError{AppID: l.req.AppID, Retry: true, Reason: "no matching log file on its NodeManagers yet"}
	}
	return nil
}

// follow prints the selected tasks' new lines until the application ends.
func (l *liveLogs) follow(ctx context.Context, r *hadoopyarn.ApplicationReportProto, out FollowOutput) error {
	l.nm = nodemanager.New(r.GetUser())
	defer l.nm.Close()
	l.http = map[string]string{}
	set := newFollowSet(l.nm, l.req.Files, l.req.Tail, out, l.notes)
	defer set.close()
	t := time.NewTicker(l.req.PollInterval)
	defer t.Stop()
	for round := 0; ; round++ {
		ended := yarn.IsTerminal(r.GetYarnApplicationState())
		if !ended && round%5 == 0 {
			// New containers (a task restarted) appear on the status page.
			if tcs, err := l.containers(ctx, r); err == nil {
				for _, tc := range tcs {
					if addr, err := nodeHTTP(ctx, l.src.RM, l.req.CallTimeout, l.http, tc.node); err == nil {
						set.add(tc, addr)
					}
				}
			} else if ue := (*UnavailableError)(nil); !errors.As(err, &ue) || !ue.Retry {
				// No such task: waiting would not help. A task without a
				// container yet, or an AM not up yet, is waited for.
				return err
			}
		}
		set.poll(ctx)
		if ended {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		nr, err := appReport(ctx, l.src.RM, l.id, l.req.CallTimeout)
		if err == nil {
			r = nr
		}
	}
}

// followSet follows some containers' files.
type followSet struct {
	nm    *nodemanager.Client
	files []string
	tail  int
	out   FollowOutput
	notes func(string)

	mu   sync.Mutex
	seen map[string]bool // containers added
	fs   []*fileFollower
	// nativeSaid: the one note about NodeManagers that cannot read logs
	// without Hadoop's native library was given.
	nativeSaid bool
}

type fileFollower struct {
	mu     sync.Mutex // one poll at a time: the follower keeps an offset
	tc     taskContainer
	file   string
	f      *nodemanager.Follower
	w      io.Writer
	first  bool
	known  bool // the NodeManager served the file once
	done   bool
	warned bool
	// noNative: its NodeManager cannot read it without Hadoop's native
	// library, which the follow set says once for all its files.
	noNative bool
}

func newFollowSet(nm *nodemanager.Client, files []string, tail int, out FollowOutput, notes func(string)) *followSet {
	if len(files) == 0 {
		files = defaultFollowFiles
	}
	return &followSet{nm: nm, files: files, tail: tail, out: out, notes: notes, seen: map[string]bool{}}
}

func (s *followSet) add(tc taskContainer, addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[tc.container] {
		return
	}
	s.seen[tc.container] = true
	for _, name := range s.files {
		s.fs = append(s.fs, &fileFollower{tc: tc, file: name, f: s.nm.Follow(addr, tc.container, name, 0), w: s.out(tc.task, name), first: true})
	}
}

// poll writes what each file gained; a container its NodeManager no
// longer knows is done.
func (s *followSet) poll(ctx context.Context) {
	for _, ff := range s.list() {
		ff.poll(ctx, s.tail, false, s.notes)
	}
	s.sayNoNative()
}

// sayNoNative gives, once, the note that NodeManagers cannot read the
// followed files without Hadoop's native library: every task's every
// file fails so, and one line per file would bury the run's output. It
// counts the files seen failing so far (the round that first saw it polled
// every container known then).
func (s *followSet) sayNoNative() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nativeSaid || s.notes == nil {
		return
	}
	var tasks []string
	files := 0
	for _, ff := range s.fs {
		ff.mu.Lock()
		if ff.noNative {
			files++
			if !slices.Contains(tasks, ff.tc.task) {
				tasks = append(tasks, ff.tc.task)
			}
		}
		ff.mu.Unlock()
	}
	if files == 0 {
		return
	}
	s.nativeSaid = true
	s.notes(noNativeNote(tasks, files))
}

// noNativeNote is the one line saying which tasks' output cannot be shown
// live, why, and where it will be.
func noNativeNote(tasks []string, files int) string {
	const listed = 4
	names := strings.Join(tasks, ", ")
	if len(tasks) > listed {
		names = strings.Join(tasks[:listed], ", ") + fmt.Sprintf(" and %d more", len(tasks)-listed)
	}
	return fmt.Sprintf("cannot show the tasks' output live (%s of %s so far: %s, and any later task's): %s; "+
		"their logs will be in the application's aggregated logs once it ends (tfyarn logs <application id>, on a cluster that aggregates logs)",
		plural(files, "file"), plural(len(tasks), "task"), names, nodemanager.NoNativeLibrary)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func (s *followSet) list() []*fileFollower {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*fileFollower(nil), s.fs...)
}

// poll writes what the file gained; last ends it (the container ended).
func (ff *fileFollower) poll(ctx context.Context, tail int, last bool, notes func(string)) {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	if ff.done {
		return
	}
	data, err := ff.f.Poll(ctx)
	if err == nil {
		ff.known = true
		if ff.first && tail > 0 {
			data = nodemanager.LastLines(data, tail)
		}
		ff.first = false
		if len(data) > 0 {
			_, _ = ff.w.Write(data)
		}
	}
	if err != nil && !nodemanager.UnknownContainer(err) && !ff.warned && notes != nil && ctx.Err() == nil {
		ff.warned = true // once: the follower keeps trying
		if nodemanager.NeedsNativeLibrary(err) {
			ff.noNative = true // the set says it, once for every file
		} else {
			notes(fmt.Sprintf("cannot read %s's %s (%s) from its NodeManager: %v", ff.tc.task, ff.file, ff.tc.container, nodemanager.Explain(err)))
		}
	}
	// A NodeManager does not know a container that has not started yet:
	// unknown is the end only for one it knew.
	if last || (ff.known && nodemanager.UnknownContainer(err)) {
		ff.done = true
		flush(ff.w)
	}
}

// finish polls one container's files a last time and flushes them.
func (s *followSet) finish(ctx context.Context, container string) {
	var tc *taskContainer
	known, warned := false, false
	for _, ff := range s.list() {
		if ff.tc.container == container {
			ff.poll(ctx, s.tail, true, s.notes)
			tc, known = &ff.tc, known || ff.known
			ff.mu.Lock()
			warned = warned || ff.warned
			ff.mu.Unlock()
		}
	}
	// A short task's first poll may be this last one.
	s.sayNoNative()
	// A follower that already said why it could not read (a secure NodeManager without Hadoop's
	// native library, say) said it: "never served" would blame a NodeManager that answered.
	if tc != nil && !known && !warned && s.notes != nil {
		s.notes(fmt.Sprintf("cannot show %s's output: the NodeManager of %s never served its logs", tc.task, tc.container))
	}
}

// close flushes every file's last partial line.
func (s *followSet) close() {
	for _, ff := range s.list() {
		ff.mu.Lock()
		if !ff.done {
			ff.done = true
			flush(ff.w)
		}
		ff.mu.Unlock()
	}
}

func flush(w io.Writer) {
	if f, ok := w.(interface{ Flush() }); ok {
		f.Flush()
	}
}
