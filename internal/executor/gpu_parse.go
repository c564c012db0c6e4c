package executor

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/internal/contract"
)

// gpuQuery is what the launcher asks nvidia-smi, the columns of
// ParseGPUCSV's input (the header and units left in: columns are found by
// name, so a driver that reorders or renames one is caught, not misread).
const gpuQuery = "index,uuid,name,utilization.gpu,utilization.memory,memory.total,memory.used,memory.free,temperature.gpu,power.draw"

// Bounds on what ParseGPUCSV accepts: nvidia-smi's output for a node's
// GPUs is a few hundred bytes.
const (
	maxGPUCSVBytes = 64 << 10
	maxGPUs        = 64
	maxGPUNameLen  = 128
)

// ParseGPUCSV reads `nvidia-smi --query-gpu=<gpuQuery> --format=csv`
// (a header line, then one line per GPU, values with units: "75 %",
// "81559 MiB"). "noheader,nounits" output is read too, in gpuQuery's
// column order. Fields it does not need are ignored; a value nvidia-smi
// reads as "[N/A]" or "[Not Supported]" counts as 0.
func ParseGPUCSV(out []byte) ([]contract.GPUSample, error) {
	if len(out) > maxGPUCSVBytes {
		return nil, fmt.Errorf("nvidia-smi output of %d bytes, at most %d", len(out), maxGPUCSVBytes)
	}
	cols := map[string]int{}
	for i, name := range strings.Split(gpuQuery, ",") {
		cols[name] = i
	}
	var gpus []contract.GPUSample
	sc := bufio.NewScanner(bytes.NewReader(out))
	first := true
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		fields := strings.Split(line, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if first && fields[0] == "index" {
			first = false
			cols = map[string]int{}
			for i, h := range fields {
				name, _, _ := strings.Cut(h, " ") // "memory.total [MiB]"
				cols[name] = i
			}
			for _, need := range []string{"index", "utilization.gpu", "memory.total", "memory.used"} {
				if _, ok := cols[need]; !ok {
					return nil, fmt.Errorf("nvidia-smi header lacks %q: %q", need, line)
				}
			}
			continue
		}
		first = false
		if len(gpus) == maxGPUs {
			return nil, fmt.Errorf("nvidia-smi lists more than %d GPUs", maxGPUs)
		}
		get := func(name string) (string, bool) {
			i, ok := cols[name]
			if !ok || i >= len(fields) {
				return "", false
			}
			return fields[i], true
		}
		var g contract.GPUSample
		idx, ok := get("index")
		if !ok {
			return nil, fmt.Errorf("nvidia-smi line %q: too few fields", line)
		}
		n, err := strconv.Atoi(idx)
		if err != nil || n < 0 || n > 1<<16 {
			return nil, fmt.Errorf("nvidia-smi line %q: bad GPU index %q", line, idx)
		}
		g.Index = n
		if name, ok := get("name"); ok {
			if len(name) > maxGPUNameLen {
				name = name[:maxGPUNameLen]
			}
			g.Name = strings.ToValidUTF8(name, "")
		}
		util, err := gpuNumber(get("utilization.gpu"))
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi line %q: utilization.gpu: %w", line, err)
		}
		g.UtilizationPct = int(min(util, 100))
		if g.MemoryUsedMiB, err = gpuNumber(get("memory.used")); err != nil {
			return nil, fmt.Errorf("nvidia-smi line %q: memory.used: %w", line, err)
		}
		if g.MemoryTotalMiB, err = gpuNumber(get("memory.total")); err != nil {
			return nil, fmt.Errorf("nvidia-smi line %q: memory.total: %w", line, err)
		}
		gpus = append(gpus, g)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading nvidia-smi output: %w", err)
	}
	return gpus, nil
}

// gpuNumber reads "75 %", "81559 MiB" or "75"; nvidia-smi's "[N/A]" and
// "[Not Supported]" read as 0.
func gpuNumber(v string, ok bool) (int64, error) {
	if !ok {
		return 0, fmt.Errorf("missing")
	}
	if strings.HasPrefix(v, "[") {
		return 0, nil
	}
	num, _, _ := strings.Cut(v, " ")
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return 0, fmt.Errorf("bad number %q", v)
	}
	return n, nil
}
