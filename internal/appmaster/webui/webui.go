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

	"github.com/tfyarn/tfyarn/internal/cliout"
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
// times are measured to while tasks run (nil: time.Now). public says the
// report is the job's public view (what everyone but its owner sees): the
// page says so and leaves the owner's rows out.
func Handler(report func() contract.StatusReport, now func() time.Time, public bool) http.Handler {
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
		if err := page.Execute(&buf, view{StatusReport: report(), Now: now(), StatusPath: strings.TrimPrefix(contract.StatusPath, "/"), Public: public}); err != nil {
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
	Public     bool   // the job's public view
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
	return cliout.Duration(end.Sub(*t.StartedAt))
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

// GPUText, ProcessText and ProgressText are cliout's cells (the words
// `tfyarn status` uses too) over the AM's report types.

// GPUText sums a task's GPUs up in one cell (cliout.GPUText).
func GPUText(gpus []contract.GPUSample) string {
	cells := make([]cliout.GPU, len(gpus))
	for i, g := range gpus {
		cells[i] = cliout.GPU{Index: g.Index, UtilizationPct: g.UtilizationPct, MemoryUsedMiB: g.MemoryUsedMiB, MemoryTotalMiB: g.MemoryTotalMiB}
	}
	return cliout.GPUText(cells)
}

// ProcessText sums a task's program up in one cell (cliout.ProcessText).
func ProcessText(t contract.TaskReport) string {
	p := t.ProcessSample
	if p == nil {
		return cliout.ProcessText(nil)
	}
	return cliout.ProcessText(&cliout.Process{CPUPercent: p.CPUPercent, RSSBytes: p.RSSBytes, PeakRSSBytes: p.PeakRSSBytes,
		NearMemoryLimit: t.NearMemoryLimit, MemoryLimitBytes: t.MemoryLimitBytes})
}

func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// ProgressText sums the job's training progress up in one cell (cliout.ProgressText).
func ProgressText(p *contract.JobProgress) string {
	if p == nil {
		return cliout.ProgressText(nil)
	}
	return cliout.ProgressText(&cliout.Progress{Fraction: p.Fraction, Step: p.Step, Total: p.Total, Task: p.Task,
		StepsPerSecond: p.StepsPerSecond, FractionPerSecond: p.FractionPerSecond, ETASeconds: p.ETASeconds})
}
