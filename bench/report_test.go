//go:build bench || soak

package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// machine is what every benchmark result starts with: which benchmark,
// when, and on what. Embedded in a result, its fields stay top-level JSON keys.
type machine struct {
	Benchmark     string `json:"benchmark"`
	Date          string `json:"date"`
	Machine       string `json:"machine"`
	NProc         int    `json:"nproc"`
	CPU           string `json:"cpu"`
	GoVersion     string `json:"go_version"`
	HadoopVersion string `json:"hadoop_version"`
}

func newMachine(t *testing.T, root, benchmark string) machine {
	return machine{
		Benchmark:     benchmark,
		Date:          time.Now().UTC().Format(time.RFC3339),
		Machine:       runtime.GOOS + "/" + runtime.GOARCH,
		NProc:         runtime.NumCPU(),
		CPU:           cpuModel(),
		GoVersion:     runtime.Version(),
		HadoopVersion: hadoopVersion(t, root),
	}
}

// markdown is the results page's list of facts about the run; cluster
// describes the test cluster beyond "single-machine cluster".
func (m machine) markdown(cluster string) string {
	return fmt.Sprintf("- Date: %s\n- Machine: %s, %d CPUs, %s\n- Go: %s\n- Hadoop: %s (testcluster/, single-machine cluster%s)\n",
		m.Date, m.Machine, m.NProc, m.CPU, m.GoVersion, m.HadoopVersion, cluster)
}

// writeResults writes r as bench/results/<name>.json and md as <name>.md.
func writeResults(t *testing.T, c *clustertest.Cluster, name string, r any, md string) {
	dir := filepath.Join(c.Root, "bench", "results")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	js, err := json.MarshalIndent(r, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), append(js, '\n'), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".md"), []byte(md), 0o644))
}

// tfyarnBin is bin/tfyarn as `make build` made it: the binary benchmarked.
func tfyarnBin(t *testing.T, c *clustertest.Cluster) string {
	bin := filepath.Join(c.Root, "bin", "tfyarn")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is missing: run 'make build' first (bench/run.sh does)", bin)
	}
	return bin
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	if m := regexp.MustCompile(`(?m)^model name\s*:\s*(.+)$`).FindSubmatch(b); m != nil {
		return strings.TrimSpace(string(m[1]))
	}
	return "unknown"
}

func hadoopVersion(t *testing.T, root string) string {
	b, err := os.ReadFile(filepath.Join(root, "testcluster", "pom.xml"))
	require.NoError(t, err)
	if m := regexp.MustCompile(`<hadoop.version>([^<]+)</hadoop.version>`).FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return "unknown"
}

// quantile interpolates linearly between closest ranks (numpy's default).
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(pos)
	if lo+1 >= len(sorted) {
		return sorted[lo]
	}
	return sorted[lo] + (pos-float64(lo))*(sorted[lo+1]-sorted[lo])
}

func sortedCopy(v []float64) []float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

func roundAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, f := range v {
		out[i] = round2(f)
	}
	return out
}
