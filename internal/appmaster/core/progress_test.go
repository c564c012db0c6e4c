package core

import (
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

func TestJobProgress(t *testing.T) {
	chief := taskspec.TaskID{Type: taskspec.Chief}
	w := func(i int) taskspec.TaskID { return taskspec.TaskID{Type: taskspec.Worker, Index: i} }
	ps := taskspec.TaskID{Type: taskspec.PS}
	eval := taskspec.TaskID{Type: taskspec.Evaluator}
	rep := func(id taskspec.TaskID, f float64) TaskProgress { return TaskProgress{Task: id, Fraction: f} }
	cases := []struct {
		name     string
		hasChief bool
		reports  []TaskProgress
		want     float64
		who      string
		ok       bool
	}{
		{"nobody reported", true, nil, 0, "", false},
		{"the chief speaks for the job", true, []TaskProgress{rep(w(0), 0.9), rep(chief, 0.3), rep(w(1), 0.1)}, 0.3, "chief:0", true},
		{"no chief: worker:0", false, []TaskProgress{rep(w(1), 0.2), rep(w(0), 0.7)}, 0.7, "worker:0", true},
		{"chief silent: the slowest worker", true, []TaskProgress{rep(w(0), 0.9), rep(w(2), 0.4), rep(w(1), 0.6)}, 0.4, SlowestWorker, true},
		{"worker:0 silent: the slowest worker", false, []TaskProgress{rep(w(3), 0.5), rep(w(1), 0.25)}, 0.25, SlowestWorker, true},
		{"ps and evaluator never speak", false, []TaskProgress{rep(ps, 0.5), rep(eval, 0.9)}, 0, "", false},
		{"worker:0 speaks even when behind", false, []TaskProgress{rep(w(0), 0.1), rep(w(1), 0.8)}, 0.1, "worker:0", true},
	}
	for _, c := range cases {
		p, who, ok := JobProgress(c.hasChief, c.reports)
		if ok != c.ok || who != c.who || p.Fraction != c.want {
			t.Errorf("%s: got %v %q %v, want %v %q %v", c.name, p.Fraction, who, ok, c.want, c.who, c.ok)
		}
	}
}

func TestProgressRateAndETA(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	steps := func(pts ...[2]float64) []ProgressPoint { // {seconds, step} of 1000
		var h []ProgressPoint
		for _, p := range pts {
			h = AddProgressPoint(h, ProgressPoint{At: at(p[0]), Step: int64(p[1]), Total: 1000, Fraction: p[1] / 1000})
		}
		return h
	}
	cases := []struct {
		name     string
		points   []ProgressPoint
		now      float64
		known    bool
		stepsPS  float64
		hasSteps bool
		eta      time.Duration
		hasETA   bool
	}{
		{"one point: no rate", steps([2]float64{0, 100}), 1, false, 0, false, 0, false},
		{"10 steps/s, 800 left", steps([2]float64{0, 100}, [2]float64{10, 200}), 10, true, 10, true, 80 * time.Second, true},
		{"time since the last report counts", steps([2]float64{0, 100}, [2]float64{10, 200}), 15, true, 10, true, 75 * time.Second, true},
		{"repeated values add nothing", steps([2]float64{0, 100}, [2]float64{5, 100}, [2]float64{10, 200}), 10, true, 10, true, 80 * time.Second, true},
		{"going back starts over", steps([2]float64{0, 100}, [2]float64{10, 500}, [2]float64{20, 50}), 20, false, 0, false, 0, false},
		{"stalled a minute: rate, no ETA", steps([2]float64{0, 100}, [2]float64{10, 200}), 75, true, 10, true, 0, false},
		{"done: ETA 0", steps([2]float64{0, 900}, [2]float64{10, 1000}), 10, true, 10, true, 0, true},
		{"the window keeps one older baseline", steps([2]float64{0, 0}, [2]float64{90, 100}, [2]float64{130, 500}, [2]float64{160, 800}), 160, true, 10, true, 20 * time.Second, true},
	}
	for _, c := range cases {
		r := EstimateProgress(c.points, at(c.now))
		if r.Known != c.known || r.HasSteps != c.hasSteps || r.StepsPerSecond != c.stepsPS || r.HasETA != c.hasETA || r.ETA != c.eta {
			t.Errorf("%s: got %+v (points %v)", c.name, r, c.points)
		}
	}

	// Fractions alone: a rate in fraction per second, ETA from it.
	var h []ProgressPoint
	h = AddProgressPoint(h, ProgressPoint{At: at(0), Fraction: 0.2})
	h = AddProgressPoint(h, ProgressPoint{At: at(4), Fraction: 0.6})
	r := EstimateProgress(h, at(4))
	if !r.Known || r.HasSteps || r.FractionPerSecond < 0.0999 || r.FractionPerSecond > 0.1001 || !r.HasETA || r.ETA != 4*time.Second {
		t.Errorf("fractions: %+v", r)
	}

	// However often programs report, the history stays bounded.
	h = nil
	for i := range 10 * maxProgressPoints {
		h = AddProgressPoint(h, ProgressPoint{At: at(float64(i) / 100), Step: int64(i), Total: 1 << 20, Fraction: float64(i) / (1 << 20)})
	}
	if len(h) > maxProgressPoints {
		t.Errorf("%d points kept, at most %d", len(h), maxProgressPoints)
	}
}
