package executor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
)

// h100Idle is what testdata/h100-query-gpu.csv (real output of an H100,
// idle, for gpuQuery) reads as.
var h100Idle = []contract.GPUSample{{Index: 0, Name: "NVIDIA H100 80GB HBM3", UtilizationPct: 0, MemoryUsedMiB: 0, MemoryTotalMiB: 81559}}

func TestParseGPUCSV(t *testing.T) {
	real, err := os.ReadFile("testdata/h100-query-gpu.csv")
	require.NoError(t, err)
	require.Contains(t, string(real), "index, uuid, name, utilization.gpu [%]", "the fixture is the output of gpuQuery")
	got, err := ParseGPUCSV(real)
	require.NoError(t, err)
	require.Equal(t, h100Idle, got)

	// The busy H100's values (h100-busy-q-x.xml: 75 %, 1011 of 81559 MiB)
	// as noheader,nounits lines, two GPUs, one with an unsupported field.
	got, err = ParseGPUCSV([]byte("0, GPU-799fbb62, NVIDIA H100 80GB HBM3, 75, 26, 81559, 1011, 80067, 45, 402.5\n" +
		"1, GPU-1, NVIDIA H100 80GB HBM3, [N/A], 0, 81559, 0, 81079, 32, [Not Supported]\n"))
	require.NoError(t, err)
	require.Equal(t, []contract.GPUSample{
		{Index: 0, Name: "NVIDIA H100 80GB HBM3", UtilizationPct: 75, MemoryUsedMiB: 1011, MemoryTotalMiB: 81559},
		{Index: 1, Name: "NVIDIA H100 80GB HBM3", UtilizationPct: 0, MemoryUsedMiB: 0, MemoryTotalMiB: 81559},
	}, got)

	for name, bad := range map[string]string{
		"header without memory": "index, name, utilization.gpu [%]\n0, x, 5 %\n",
		"bad index":             "x, u, n, 1, 1, 1, 1, 1, 1, 1\n",
		"negative memory":       "0, u, n, 1, 1, 1, -1, 1, 1, 1\n",
		"too few fields":        "0, u, n\n",
		"too large":             string(bytes.Repeat([]byte("0, u, n, 1, 1, 1, 1, 1, 1, 1\n"), 3000)),
	} {
		_, err := ParseGPUCSV([]byte(bad))
		require.Error(t, err, name)
	}
	_, err = ParseGPUCSV(bytes.Repeat([]byte("0, u, n, 1, 1, 1, 1, 1, 1, 1\n"), maxGPUs+1))
	require.ErrorContains(t, err, "more than 64 GPUs")
}

func FuzzParseGPUCSV(f *testing.F) {
	real, err := os.ReadFile("testdata/h100-query-gpu.csv")
	require.NoError(f, err)
	f.Add(real)
	f.Add([]byte("0, GPU-1, n, 75, 26, 81559, 1011, 80067, 45, 402.5\n"))
	f.Add([]byte("index, memory.used [MiB]\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		gpus, err := ParseGPUCSV(out)
		if err != nil {
			return
		}
		if len(gpus) > maxGPUs {
			t.Fatalf("%d GPUs", len(gpus))
		}
		for _, g := range gpus {
			if g.UtilizationPct < 0 || g.UtilizationPct > 100 || g.MemoryUsedMiB < 0 || g.MemoryTotalMiB < 0 || len(g.Name) > maxGPUNameLen {
				t.Fatalf("out of range: %+v", g)
			}
		}
	})
}

func TestGPUArgs(t *testing.T) {
	base := []string{"--query-gpu=" + gpuQuery, "--format=csv"}
	require.Equal(t, base, gpuArgs(nil, false))
	require.Equal(t, base, gpuArgs([]string{"NVIDIA_VISIBLE_DEVICES=all"}, false))
	require.Equal(t, append(base, "--id=1,3"), gpuArgs([]string{"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_VISIBLE_DEVICES=0"}, false))
	require.Equal(t, append(base, "--id=GPU-799fbb62"), gpuArgs([]string{"CUDA_VISIBLE_DEVICES=GPU-799fbb62"}, false))
	require.Nil(t, gpuArgs([]string{"NVIDIA_VISIBLE_DEVICES=none"}, false), "no GPU: nothing to sample")
	// In a Docker image the runtime nvidia gave the container GPUs 1 and 3 of the node, which its
	// nvidia-smi numbers 0 and 1: every GPU it sees is the container's, the node's numbers mean
	// nothing there; the user's own CUDA_VISIBLE_DEVICES (the container's numbers) still applies.
	require.Equal(t, base, gpuArgs([]string{"NVIDIA_VISIBLE_DEVICES=1,3"}, true))
	require.Equal(t, append(base, "--id=0"), gpuArgs([]string{"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_VISIBLE_DEVICES=0"}, true))
	require.Nil(t, gpuArgs([]string{"NVIDIA_VISIBLE_DEVICES=void"}, true), "no GPU: nothing to sample")
}

// TestSampleGPUs runs a stand-in nvidia-smi, found on the program's PATH,
// that prints the real H100 output and records its arguments.
func TestSampleGPUs(t *testing.T) {
	dir := t.TempDir()
	fixture, err := filepath.Abs("testdata/h100-query-gpu.csv")
	require.NoError(t, err)
	argsFile := filepath.Join(dir, "args")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia-smi"),
		[]byte("#!/bin/sh\necho \"$@\" > "+argsFile+"\ncat "+fixture+"\n"), 0o755))
	env := []string{"PATH=" + dir + ":/usr/bin:/bin", "CUDA_VISIBLE_DEVICES=0"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	var sent [][]contract.GPUSample
	done := make(chan struct{})
	go func() {
		defer close(done)
		sampleGPUs(ctx, env, false, 10*time.Millisecond, func(_ context.Context, g []contract.GPUSample) error {
			mu.Lock()
			defer mu.Unlock()
			if sent = append(sent, g); len(sent) == 2 {
				cancel()
			}
			return nil
		}, &logger{w: os.Stderr})
	}()
	<-done
	require.Len(t, sent, 2, "samples again after the interval")
	require.Equal(t, h100Idle, sent[0])
	args, err := os.ReadFile(argsFile)
	require.NoError(t, err)
	require.Equal(t, "--query-gpu="+gpuQuery+" --format=csv --id=0\n", string(args))

	// Without nvidia-smi on the PATH: nothing is sent, at once.
	var log bytes.Buffer
	sampleGPUs(context.Background(), []string{"PATH=/nonexistent"}, false, time.Millisecond, func(context.Context, []contract.GPUSample) error {
		t.Fatal("sent without nvidia-smi")
		return nil
	}, &logger{w: &log})
	require.Empty(t, log.String())
}
