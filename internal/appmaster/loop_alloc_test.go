package appmaster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

func loopAlloc(t *testing.T, f *fakeCluster, workers int, label string, timeout time.Duration) LoopResult {
	t.Helper()
	g, err := taskspec.ParseSpec(taskspec.Worker, fmt.Sprintf("%dx1c,256m", workers))
	require.NoError(t, err)
	g.NodeLabel = label
	res, err := Loop(context.Background(), LoopConfig{
		Job: taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "true"},
		RM:  f,
		NM:  f,
		LaunchContext: func(core.Launch) *hadoopyarn.ContainerLaunchContextProto {
			return &hadoopyarn.ContainerLaunchContextProto{}
		},
		Heartbeat:     time.Millisecond,
		FastHeartbeat: time.Millisecond,
		AllocTimeout:  timeout,
		ClusterOffers: map[string]string{"": "the cluster offers queue default nothing"},
	})
	require.NoError(t, err)
	require.True(t, res.Unregistered)
	return res
}

// A refused ask ends the job on the first refusal, in plain words, never
// after MaxRMFailures as a lost ResourceManager.
func TestLoopRequestRefused(t *testing.T) {
	rerr := &ipc.RemoteError{Class: yarn.InvalidLabelResourceRequestException, Message: "Invalid label resource request, cluster do not contain , label= nosuchlabel"}
	f := &fakeCluster{allocErr: &yarn.RequestRefusedError{Class: rerr.Class, Message: rerr.Message, Err: rerr}}
	start := time.Now()
	res := loopAlloc(t, f, 2, "nosuchlabel", 0)
	require.Less(t, time.Since(start), time.Second)
	require.Equal(t, core.Finish{Status: core.Failed, Diagnostics: `the ResourceManager refused the worker request: label "nosuchlabel" does not exist on the cluster (InvalidLabelResourceRequestException)`}, res.Finish)
	require.Equal(t, hadoopyarn.FinalApplicationStatusProto_APP_FAILED, f.finished.GetFinalApplicationStatus())
}

// With containers that never come, the loop ends at the deadline.
func TestLoopAllocDeadline(t *testing.T) {
	f := &fakeCluster{noAlloc: true}
	start := time.Now()
	res := loopAlloc(t, f, 2, "", 200*time.Millisecond)
	took := time.Since(start)
	require.GreaterOrEqual(t, took, 200*time.Millisecond)
	require.Less(t, took, 2*time.Second)
	require.Equal(t, core.Failed, res.Finish.Status)
	require.Equal(t, `worker:0, worker:1 (1 vcores, 256 MiB, label "") were not allocated within 200ms: the cluster offers queue default nothing; ask for less or raise --alloc-timeout`, res.Finish.Diagnostics)
	require.Equal(t, res.Finish.Diagnostics, f.finished.GetDiagnostics())
}

// Right after new asks the AM calls allocate every EagerHeartbeat, since the
// scheduler may place the containers at any NodeManager's heartbeat; after
// eagerWindow an unmet ask falls back to FastHeartbeat, bounding the calls a
// full cluster costs the ResourceManager.
func TestLoopAllocatesEagerlyAfterNewAsks(t *testing.T) {
	f := &fakeCluster{noAlloc: true}
	g, err := taskspec.ParseSpec(taskspec.Worker, "1x1c,256m")
	require.NoError(t, err)
	_, err = Loop(context.Background(), LoopConfig{
		Job: taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "true"},
		RM:  f, NM: f,
		LaunchContext: func(core.Launch) *hadoopyarn.ContainerLaunchContextProto {
			return &hadoopyarn.ContainerLaunchContextProto{}
		},
		AllocTimeout:  eagerWindow + time.Second,
		ClusterOffers: map[string]string{"": "nothing"},
	})
	require.NoError(t, err)
	f.mu.Lock()
	defer f.mu.Unlock()
	first := f.allocateSent[0]
	eager, later := 0, 0
	for _, at := range f.allocateSent[1:] {
		switch since := at.Sub(first); {
		case since < eagerWindow-100*time.Millisecond:
			eager++
		case since > eagerWindow+100*time.Millisecond && since < eagerWindow+time.Second-100*time.Millisecond:
			later++
		}
	}
	// 50 ms apart: about 38 calls in the first 1.9 s; 150 ms apart: about 5 in 0.8 s.
	require.Greater(t, eager, 25, "allocate calls in the eager window")
	require.Less(t, later, 9, "allocate calls after the eager window")
}
