package localrun

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/transcript"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestCoreTranscriptsLocally replays the core's transcripts
// (appmaster/core/testdata) through --local's driver, with launchers that
// only record what they are told: the stops and the final status a local
// run carries out must be the ones the ApplicationMaster carries out. The
// local driver allocates and starts every task itself, so the YARN side's
// allocate and start steps are no-ops here, and transcripts about YARN's
// allocation (marked "# yarn only") are left out.
func TestCoreTranscriptsLocally(t *testing.T) {
	ran := 0
	for _, path := range transcript.Files(t, "../appmaster/core/testdata/*.txt") {
		f, err := transcript.Parse(path)
		if err != nil {
			t.Fatal(err)
		}
		if f.HasComment("# yarn only") {
			continue
		}
		ran++
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			h := &localHarness{}
			for _, c := range f.Cases {
				got := h.do(t, c.Cmd)
				if want := localView(c.Want); got != want {
					t.Fatalf("%s: %s\n got:\n%s\nwant:\n%s", c.Cmd.Pos, c.Cmd.Line, got, want)
				}
			}
		})
	}
	if ran < 5 {
		t.Fatalf("only %d transcripts ran locally", ran)
	}
}

// containerPart is how a YARN failure line names the container; a local
// one names none.
var containerPart = regexp.MustCompile(` \(container \S+ on \S+\)`)

// localView keeps of a transcript's output what a local driver carries out
// too: the stops and the finish.
func localView(out string) string {
	var keep []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "stop ") || strings.HasPrefix(line, "finish ") || strings.HasPrefix(line, "restart ") {
			keep = append(keep, containerPart.ReplaceAllString(line, ""))
		}
	}
	return strings.Join(keep, "\n")
}

// localHarness drives the local driver with fakeProcs and a clock moved by
// tick.
type localHarness struct {
	d   *driver
	p   *fakeProcs
	now time.Time
}

func (h *localHarness) do(t *testing.T, c transcript.Cmd) string {
	t.Helper()
	switch c.Name {
	case "new":
		job, err := transcript.Job(c)
		if err != nil {
			t.Fatal(err)
		}
		stopGrace, err := time.ParseDuration(c.Get("stop-grace", "0s"))
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Success: taskspec.SuccessRule(c.Get("rule", "")), ProgramStopGrace: stopGrace - stuckMargin}
		if g := c.Get("worker-grace", ""); g != "" {
			opts.WorkerGrace, _ = time.ParseDuration(g)
		}
		opts.setDefaults()
		h.p = &fakeProcs{live: map[taskspec.TaskID]string{}}
		h.d, err = newDriver(job, opts, h.p)
		if err != nil {
			t.Fatal(err)
		}
		h.now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		return ""
	case "register":
		h.d.begin(h.now)
	case "registered":
		// As the core's harness: at 2000 + the task's position, or the
		// port it was told to re-take.
		for i, task := range h.d.m.Tasks() {
			if (len(c.Args) == 0 || c.Args[0] == task.Task.String()) && task.State.Live() {
				port := 2000 + i
				if task.WantPort != 0 {
					port = task.WantPort
				}
				h.d.step(core.TaskRegistered{Task: task.Task, Host: "127.0.0.1", Port: port})
			}
		}
	case "allocate", "start", "fail-start", "tasks", "restarts":
		// The local driver allocates and starts by itself.
	case "exit":
		id, err := taskspec.ParseTaskID(c.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		code, _ := strconv.Atoi(c.Args[1])
		h.d.exited(h.now, h.p.live[id], code, strings.Join(c.Args[2:], " "), "")
	case "no-restart":
		id, err := taskspec.ParseTaskID(c.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		code, _ := strconv.Atoi(c.Args[1])
		h.d.exited(h.now, h.p.live[id], code, "the program exited with code "+c.Args[1], strings.Join(c.Args[2:], " "))
	case "tick":
		d, err := time.ParseDuration(strings.TrimPrefix(c.Args[0], "+"))
		if err != nil {
			t.Fatal(err)
		}
		h.now = h.now.Add(d)
		h.d.step(core.Tick{Now: h.now})
	case "kill":
		// "kill later-attempt": the job allows another AM attempt (the transcripts' hand-over).
		later := len(c.Args) > 0 && c.Args[0] == "later-attempt"
		if later {
			c.Args = c.Args[1:]
		}
		h.d.step(core.KillRequested{Reason: strings.Join(c.Args, " "), LaterAttempt: later})
	case "rendezvous-failed":
		h.d.step(core.RendezvousFailed{Reason: strings.Join(c.Args, " ")})
	default:
		t.Fatalf("%s: the local harness has no %q", c.Pos, c.Name)
	}
	return h.p.take()
}

// fakeProcs records what the driver tells the launchers, in the
// transcripts' words.
type fakeProcs struct {
	live  map[taskspec.TaskID]string
	lines []string
}

func (f *fakeProcs) start(ln core.Launch) { f.live[ln.Task] = ln.Container.ID }
func (f *fakeProcs) stop(s core.Stop)     { f.lines = append(f.lines, s.String()) }
func (f *fakeProcs) kill(s core.Stop)     { f.lines = append(f.lines, s.String()) }
func (f *fakeProcs) over(fin core.Finish) { f.lines = append(f.lines, fin.String()) }
func (f *fakeProcs) restart(r core.Restart) {
	f.lines = append(f.lines, fmt.Sprintf("restart %d: new rendezvous", r.Number))
}

func (f *fakeProcs) take() string {
	out := strings.Join(f.lines, "\n")
	f.lines = nil
	return out
}
