package core

import (
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Training progress: programs write theirs to a file their launcher reads
// and sends to the AM (contract.EnvProgressFile). These pure rules decide
// which task's progress is the job's, and its rate and time left.

// TaskProgress is one task's last reported progress: Fraction 0..1, and
// Step of Total when the program counted steps (Total 0 otherwise).
type TaskProgress struct {
	Task     taskspec.TaskID
	Fraction float64
	Step     int64
	Total    int64
}

// SlowestWorker names the job's progress when it is the slowest worker's.
const SlowestWorker = "workers"

// JobProgress picks the progress that speaks for the job, and says whose
// it is. The chief's, when the job has one: it drives training (the
// ParameterServerStrategy coordinator, the task that saves checkpoints).
// Without a chief, worker:0's: TensorFlow's convention makes it the chief
// then, and it is rank 0 of the other frameworks. When that task has not
// reported (yet, or again after a restart), the slowest reporting worker's:
// the job is done when its last worker is. Other types (ps, evaluator,
// tensorboard) never speak for the job. ok is false when no task counts.
func JobProgress(hasChief bool, reports []TaskProgress) (p TaskProgress, who string, ok bool) {
	speaker := taskspec.TaskID{Type: taskspec.Worker, Index: 0}
	if hasChief {
		speaker = taskspec.TaskID{Type: taskspec.Chief, Index: 0}
	}
	for _, r := range reports {
		if r.Task == speaker {
			return r, speaker.String(), true
		}
	}
	for _, r := range reports {
		if r.Task.Type == taskspec.Worker && (!ok || r.Fraction < p.Fraction) {
			p, ok = r, true
		}
	}
	if !ok {
		return TaskProgress{}, "", false
	}
	return p, SlowestWorker, true
}

// ProgressPoint is the job's progress at one moment.
type ProgressPoint struct {
	At       time.Time
	Fraction float64
	Step     int64
	Total    int64
}

// ProgressWindow is how far back the rate looks (plus the last point
// before it, so that slow training still has a rate).
const ProgressWindow = time.Minute

// maxProgressPoints bounds a history however often programs report.
const maxProgressPoints = 128

// AddProgressPoint appends p to the history points (oldest first) and
// returns it. A progress that goes back (a restarted task starting over,
// another task speaking for the job, a new count of steps) starts the
// history again: a rate across it would mean nothing. An unchanged value
// adds nothing: the rate is measured from when a value was reached.
func AddProgressPoint(points []ProgressPoint, p ProgressPoint) []ProgressPoint {
	if n := len(points); n > 0 {
		last := points[n-1]
		switch {
		case p.Fraction < last.Fraction || p.Total != last.Total || p.Step < last.Step || p.At.Before(last.At):
			points = points[:0]
		case p.Fraction == last.Fraction && p.Step == last.Step:
			return points
		}
	}
	points = append(points, p)
	// Keep one point older than the window as the rate's baseline.
	cut := 0
	for cut+1 < len(points) && p.At.Sub(points[cut+1].At) > ProgressWindow {
		cut++
	}
	if over := len(points) - maxProgressPoints; over > cut {
		cut = over
	}
	if cut > 0 {
		points = append(points[:0], points[cut:]...)
	}
	return points
}

// ProgressRate is the rate of a progress history and the time left at it.
type ProgressRate struct {
	// FractionPerSecond is the rate in fraction of the whole; Known is
	// false until two points differ.
	FractionPerSecond float64
	Known             bool
	// StepsPerSecond is the rate in steps, when the points count steps.
	StepsPerSecond float64
	HasSteps       bool
	// ETA is the time left at that rate, counted from now; HasETA is
	// false without a rate, or when nothing moved for ProgressWindow
	// (stalled: no estimate is better than a wrong one).
	ETA    time.Duration
	HasETA bool
}

// EstimateProgress measures the rate across points (AddProgressPoint's
// history) and the time left at it, as of now.
func EstimateProgress(points []ProgressPoint, now time.Time) ProgressRate {
	var r ProgressRate
	if len(points) < 2 {
		return r
	}
	first, last := points[0], points[len(points)-1]
	secs := last.At.Sub(first.At).Seconds()
	if secs <= 0 || last.Fraction <= first.Fraction && last.Step <= first.Step {
		return r
	}
	r.FractionPerSecond, r.Known = (last.Fraction-first.Fraction)/secs, true
	if last.Total > 0 && first.Total == last.Total {
		r.StepsPerSecond, r.HasSteps = float64(last.Step-first.Step)/secs, true
	}
	if now.Sub(last.At) > ProgressWindow || r.FractionPerSecond <= 0 {
		return r
	}
	left := (1 - last.Fraction) / r.FractionPerSecond
	if r.HasSteps && r.StepsPerSecond > 0 {
		left = float64(last.Total-last.Step) / r.StepsPerSecond
	}
	// Time already spent since the last report counts against it.
	left -= now.Sub(last.At).Seconds()
	r.ETA, r.HasETA = time.Duration(max(left, 0)*float64(time.Second)).Round(time.Second), true
	return r
}
