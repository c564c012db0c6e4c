package contract

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/tfyarn/tfyarn/jobreport"
)

// Training progress, as a task's program reports it. The launcher sets
// EnvProgressFile in the program's environment; the program writes its
// progress there whenever it likes, replacing the file's content with one
// of
//
//	120/1000     step 120 of 1000 (whole numbers, 0 <= step <= total, total > 0)
//	0.12         a fraction between 0 and 1
//
// (surrounding spaces and a newline are fine). The launcher reads the file
// every second and sends what changed to the AM, which reports the job's
// progress to YARN (the application's progress) and on its status page.
const (
	// EnvProgressFile is set in every task program's environment: the
	// absolute path of the progress file (it does not exist until the
	// program writes it).
	EnvProgressFile = "TFYARN_PROGRESS_FILE"
	// MaxProgressFileSize bounds what the launcher reads of the file: a
	// longer one is no progress line and is ignored.
	MaxProgressFileSize = 64
	// maxProgressSteps bounds step and total: exact in a float64, and far
	// beyond any training's.
	maxProgressSteps = 1 << 53
)

// ProgressFileName is the progress file's name in the task's working
// directory (the container's; under `run --local` the tasks share one,
// hence the task in the name).
func ProgressFileName(taskType string, index int) string {
	return fmt.Sprintf("tfyarn-progress-%s-%d", taskType, index)
}

// Progress is one task's progress: Fraction always (0..1); Step and Total
// when the program wrote step/total (Total 0 otherwise). It travels from
// the launcher to the AM and into the status report as the one type
// jobreport defines.
type Progress = jobreport.Progress

// ErrNoProgress is ParseProgress's answer to an empty file: a program that
// truncates before writing is read in between.
var ErrNoProgress = errors.New("no progress written yet")

// ParseProgress reads the progress file's content.
func ParseProgress(b []byte) (Progress, error) {
	if len(b) > MaxProgressFileSize {
		return Progress{}, fmt.Errorf("progress file of %d bytes or more, at most %d: write step/total or a fraction", len(b), MaxProgressFileSize)
	}
	s := string(bytes.TrimSpace(b))
	if s == "" {
		return Progress{}, ErrNoProgress
	}
	if step, total, ok := bytes.Cut([]byte(s), []byte("/")); ok {
		n, err1 := strconv.ParseInt(string(step), 10, 64)
		d, err2 := strconv.ParseInt(string(total), 10, 64)
		switch {
		case err1 != nil || err2 != nil:
			return Progress{}, fmt.Errorf("progress %q: step and total must be whole numbers (step/total)", s)
		case d <= 0 || d > maxProgressSteps:
			return Progress{}, fmt.Errorf("progress %q: total must be between 1 and 2^53", s)
		case n < 0 || n > d:
			return Progress{}, fmt.Errorf("progress %q: step must be between 0 and the total", s)
		}
		return Progress{Fraction: float64(n) / float64(d), Step: n, Total: d}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
		return Progress{}, fmt.Errorf("progress %q: write step/total (120/1000) or a fraction between 0 and 1 (0.12)", s)
	}
	return Progress{Fraction: f}, nil
}

// CheckProgress validates a progress that came over the wire.
func CheckProgress(p Progress) error {
	switch {
	case math.IsNaN(p.Fraction) || p.Fraction < 0 || p.Fraction > 1:
		return fmt.Errorf("progress fraction %v out of 0..1", p.Fraction)
	case p.Total == 0 && p.Step != 0:
		return errors.New("progress step without a total")
	case p.Total < 0 || p.Total > maxProgressSteps || p.Step < 0 || p.Step > p.Total:
		return fmt.Errorf("progress %d/%d out of range", p.Step, p.Total)
	case p.Total > 0 && math.Abs(p.Fraction-float64(p.Step)/float64(p.Total)) > 1e-9:
		return fmt.Errorf("progress fraction %v is not %d/%d", p.Fraction, p.Step, p.Total)
	}
	return nil
}

// JobProgress is the job's progress on the AM's status page (jobreport's).
type JobProgress = jobreport.JobProgress
