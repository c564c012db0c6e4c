package webui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
)

//go:embed assets
var assets embed.FS

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"elapsed":  elapsed,
	"exit":     exitText,
	"addr":     addrText,
	"gpus":     GPUText,
	"progress": ProgressText,
	"process":  ProcessText,
	"stamp":    stamp,
}).ParseFS(assets, "assets/page.html"))

// Handler serves the page at "/" and its assets under "static/", from
// whatever report returns at each request. now gives the time elapsed
// times are measured to while tasks run (nil: time.Now).
func Handler(report func() contract.StatusReport, now func() time.Time) http.Handler {
	if now == nil {
		now = time.Now
	}
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	mux := http.NewServeMux()
	mux.Handle("/static/", http.StripPrefix("/static/", http.FileServer(http.FS(static))))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		var buf bytes.Buffer
		if err := page.Execute(&buf, view{StatusReport: report(), Now: now(), StatusPath: strings.TrimPrefix(contract.StatusPath, "/")}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(buf.Bytes())
	})
	return mux
}

type view struct {
	contract.StatusReport
	Now        time.Time
	StatusPath string // relative: the proxy serves us under /proxy/<app>/
}

// elapsed is how long a task's current attempt has run: from its start to
// its end, or to now while it runs; "-" before it started.
func elapsed(t contract.TaskReport, now time.Time) string {
	if t.StartedAt == nil {
		return "-"
	}
	end := now
	if t.EndedAt != nil {
		end = *t.EndedAt
	}
	return Duration(end.Sub(*t.StartedAt))
}

// Duration renders d to the second: "42s", "3m05s", "1h02m03s".
func Duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
	}
}

func exitText(t contract.TaskReport) string {
	if t.ExitCode == nil {
		return "-"
	}
	return fmt.Sprint(*t.ExitCode)
}

func addrText(t contract.TaskReport) string {
	if t.Host == "" {
		return "-"
	}
	return fmt.Sprintf("%s:%d", t.Host, t.Port)
}

// GPUText sums a task's GPUs up in one cell: "0: 87% 61234/81559 MiB; 1: ...",
// "-" when none were sampled.
func GPUText(gpus []contract.GPUSample) string {
	if len(gpus) == 0 {
		return "-"
	}
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		parts[i] = fmt.Sprintf("%d: %d%% %d/%d MiB", g.Index, g.UtilizationPct, g.MemoryUsedMiB, g.MemoryTotalMiB)
	}
	return strings.Join(parts, "; ")
}

// ProcessText sums a task's program up in one cell: its CPU over the last
// interval, its RSS and peak RSS, "87% 1.2 GiB (peak 1.5 GiB)", and when
// its peak came near the container's memory, "; near its 2.0 GiB limit";
// "-" before the first sample.
func ProcessText(t contract.TaskReport) string {
	p := t.ProcessSample
	if p == nil {
		return "-"
	}
	s := fmt.Sprintf("%.0f%% %s (peak %s)", p.CPUPercent, Bytes(p.RSSBytes), Bytes(p.PeakRSSBytes))
	if t.NearMemoryLimit {
		s += fmt.Sprintf("; near its %s limit", Bytes(t.MemoryLimitBytes))
	}
	return s
}

// Bytes renders n in MiB below a GiB, else in GiB: "240 MiB", "1.5 GiB".
func Bytes(n int64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%d MiB", (n+1<<19)>>20)
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// ProgressText sums the job's training progress up in one cell: "12.0%
// (120/1000, worker:0) · 10.5 steps/s · ETA 1m28s"; "-" before any program
// reported.
func ProgressText(p *contract.JobProgress) string {
	if p == nil {
		return "-"
	}
	s := fmt.Sprintf("%.1f%%", 100*p.Fraction)
	if p.Total > 0 {
		s += fmt.Sprintf(" (%d/%d, %s)", p.Step, p.Total, p.Task)
	} else {
		s += " (" + p.Task + ")"
	}
	switch {
	case p.StepsPerSecond != nil:
		s += fmt.Sprintf(" · %.3g steps/s", *p.StepsPerSecond)
	case p.FractionPerSecond != nil:
		s += fmt.Sprintf(" · %.3g%%/s", 100**p.FractionPerSecond)
	}
	if p.ETASeconds != nil {
		s += " · ETA " + Duration(time.Duration(*p.ETASeconds)*time.Second)
	}
	return s
}
