package executor

import (
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/pause"
)

// GPU sampling: while the program runs, the launcher asks nvidia-smi
// (found on the program's PATH, so a job can bring its own) for its GPUs'
// utilisation and memory every gpuInterval and sends the sample to the AM.
const (
	gpuInterval = 10 * time.Second
	// gpuQueryTimeout bounds one nvidia-smi call: a hung driver must not
	// pile up processes.
	gpuQueryTimeout = 5 * time.Second
)

// gpuArgs are nvidia-smi's arguments, limited to the container's GPUs
// when YARN's GPU plugin (NVIDIA_VISIBLE_DEVICES) or the user
// (CUDA_VISIBLE_DEVICES) named them: on the host nvidia-smi itself sees
// every GPU of the node. In a Docker image (inImage) YARN's GPU plugin
// (nvidia-docker-v2) has the runtime nvidia give the container the GPUs
// NVIDIA_VISIBLE_DEVICES names, and only those: nvidia-smi there sees
// them alone, numbered from 0, so the node's numbers must not be asked
// for again.
func gpuArgs(env []string, inImage bool) []string {
	args := []string{"--query-gpu=" + gpuQuery, "--format=csv"}
	for _, name := range []string{"NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"} {
		v, ok := lookupEnv(env, name)
		v = strings.TrimSpace(v)
		if !ok || v == "" || v == "all" {
			continue
		}
		if v == "none" || v == "void" || v == "-1" {
			return nil // no GPU for this container: nothing to sample
		}
		if inImage && name == "NVIDIA_VISIBLE_DEVICES" {
			continue // the runtime's choice: every GPU nvidia-smi sees is the container's
		}
		return append(args, "--id="+v)
	}
	return args
}

// sampleGPU runs nvidia-smi once.
func sampleGPU(ctx context.Context, smi string, args []string) ([]contract.GPUSample, error) {
	ctx, cancel := context.WithTimeout(ctx, gpuQueryTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, smi, args...)
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	return ParseGPUCSV(out)
}

// sampleGPUs reports the GPUs every interval until ctx ends. Without an
// nvidia-smi on the program's PATH it returns at once; a failing one is
// logged once and sampling stops (a broken driver does not heal while the
// task runs, and the task must not be disturbed).
func sampleGPUs(ctx context.Context, env []string, inImage bool, interval time.Duration, send func(context.Context, []contract.GPUSample) error, log *logger) {
	smi, ok := lookPathIn("nvidia-smi", env)
	args := gpuArgs(env, inImage)
	if !ok || args == nil {
		return
	}
	sentErr := false
	for {
		gpus, err := sampleGPU(ctx, smi, args)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.printf("GPU metrics off: %s: %v", smi, oneLine(err))
			return
		}
		sctx, cancel := context.WithTimeout(ctx, gpuQueryTimeout)
		if err := send(sctx, gpus); err != nil && ctx.Err() == nil && !sentErr {
			sentErr = true // the AM may be an older one, or busy: say it once
			log.printf("could not report GPU metrics to the AM: %v", err)
		}
		cancel()
		if pause.For(ctx, interval) != nil {
			return
		}
	}
}
