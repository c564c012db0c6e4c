package appmaster

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
	"google.golang.org/protobuf/proto"
)

// killCluster hands out the job's containers in one allocate, on two nodes
// (containers 1 and 2 on nm1, 3 on nm2), and startContainers blocks until
// its context ends: the AM is killed while launches are in flight.
type killCluster struct {
	mu        sync.Mutex
	allocated bool
	inFlight  chan struct{} // closed when the first startContainers blocks
	starts    []string      // nodes startContainers was called on
	stopped   map[string][]int64
	finishes  []*hadoopyarn.FinishApplicationMasterRequestProto
}

func (k *killCluster) Register(context.Context, string, int32, string) (*yarn.Registration, error) {
	return &yarn.Registration{Queue: "root.default", MaxCapability: yarn.NewResource(8192, 8, nil)}, nil
}

func (k *killCluster) Allocate(context.Context, []*hadoopyarn.ResourceRequestProto, []*hadoopyarn.ContainerIdProto, float32) (*yarn.Allocation, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	resp := &hadoopyarn.AllocateResponseProto{}
	if !k.allocated {
		k.allocated = true
		for i, node := range []string{"nm1", "nm1", "nm2"} {
			seq := int64(i + 1)
			resp.AllocatedContainers = append(resp.AllocatedContainers, &hadoopyarn.ContainerProto{
				Id:                  &hadoopyarn.ContainerIdProto{Id: proto.Int64(seq)},
				NodeId:              &hadoopyarn.NodeIdProto{Host: proto.String(node), Port: proto.Int32(1)},
				Resource:            yarn.NewResource(256, 1, nil),
				AllocationRequestId: proto.Int64(1),
				Priority:            &hadoopyarn.PriorityProto{Priority: proto.Int32(1)},
				ContainerToken:      &hadoopcommon.TokenProto{Identifier: []byte{byte(seq)}},
			})
		}
	}
	return &yarn.Allocation{AllocateResponseProto: resp}, nil
}

func (k *killCluster) Finish(_ context.Context, s hadoopyarn.FinalApplicationStatusProto, diag, _ string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.finishes = append(k.finishes, &hadoopyarn.FinishApplicationMasterRequestProto{FinalApplicationStatus: s.Enum(), Diagnostics: proto.String(diag)})
	return nil
}

func (k *killCluster) StartContainers(ctx context.Context, addr string, _ []yarn.StartRequest) (*yarn.StartResult, error) {
	k.mu.Lock()
	k.starts = append(k.starts, addr)
	first := len(k.starts) == 1
	k.mu.Unlock()
	if first {
		close(k.inFlight)
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (k *killCluster) StopContainers(ctx context.Context, addr string, ids []*hadoopyarn.ContainerIdProto) ([]*hadoopyarn.ContainerIdProto, []*yarn.ContainerError, error) {
	if ctx.Err() != nil {
		return nil, nil, ctx.Err() // the loop must stop with a context of its own
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, id := range ids {
		k.stopped[addr] = append(k.stopped[addr], id.GetId())
	}
	return ids, nil, nil
}

// SIGTERM while startContainers is under way: the job ends KILLED, not
// FAILED because the launches were cut off; the containers that may have
// started are stopped, the one never sent is left to unregistering, and the
// AM unregisters once.
func TestLoopKilledWhileStartingContainers(t *testing.T) {
	for _, withLaunchers := range []bool{false, true} {
		name := "without launchers"
		if withLaunchers {
			name = "with launchers"
		}
		t.Run(name, func(t *testing.T) {
			k := &killCluster{inFlight: make(chan struct{}), stopped: map[string][]int64{}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-k.inFlight
				cancel()
			}()
			g, err := taskspec.ParseSpec(taskspec.Worker, "3x1c,256m")
			require.NoError(t, err)
			cfg := LoopConfig{
				Job: taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "true"},
				RM:  k,
				NM:  k,
				LaunchContext: func(core.Launch) *hadoopyarn.ContainerLaunchContextProto {
					return &hadoopyarn.ContainerLaunchContextProto{}
				},
				Heartbeat:     time.Millisecond,
				FastHeartbeat: time.Millisecond,
			}
			var fl *fakeLaunchers
			if withLaunchers {
				fl = newFakeLaunchers(nil)
				cfg.Launchers = fl
			}
			res, err := Loop(ctx, cfg)
			require.NoError(t, err)

			require.Equal(t, core.Killed, res.Finish.Status)
			require.Equal(t, core.KilledDiagnostics+" while starting containers", res.Finish.Diagnostics)
			require.Len(t, k.finishes, 1, "unregistered once")
			require.Equal(t, hadoopyarn.FinalApplicationStatusProto_APP_KILLED, k.finishes[0].GetFinalApplicationStatus())
			require.Equal(t, core.KilledDiagnostics+" while starting containers", k.finishes[0].GetDiagnostics())
			require.True(t, res.Unregistered)

			require.Equal(t, []string{"nm1:1"}, k.starts, "no startContainers after the kill")
			require.Equal(t, map[string][]int64{"nm1:1": {1, 2}}, k.stopped, "the containers in flight are stopped")
			require.Zero(t, res.Started)
			for _, s := range res.Tasks {
				require.NotEqual(t, core.TaskFailed, s.State, "%s: %s", s.Task, s.Failure)
			}
			if fl != nil {
				require.True(t, fl.stopAll, "the launchers are told the job is over")
			}
		})
	}
}

// SIGTERM while waiting for the rendezvous, with the launchers reporting
// the rendezvous failed at the same moment (their programs dying of the
// same kill): KILLED all the same, and the started container is stopped.
func TestLoopKilledWhileWaitingForRendezvous(t *testing.T) {
	f := &fakeCluster{hold: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fl := newFakeLaunchers(nil)
	var once sync.Once
	// Observe runs just before the loop waits: once the task runs, the
	// kill and the launchers' report arrive together.
	observe := func(s Snapshot) {
		if s.Finish == nil && len(s.Tasks) == 1 && s.Tasks[0].State == core.TaskRunning {
			once.Do(func() {
				cancel()
				fl.push(core.RendezvousFailed{Reason: "interrupted"})
			})
		}
	}
	g, err := taskspec.ParseSpec(taskspec.Worker, "1c,256m")
	require.NoError(t, err)
	res, err := Loop(ctx, LoopConfig{
		Job:       taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "true"},
		RM:        f,
		NM:        f,
		Launchers: fl,
		Observe:   observe,
		LaunchContext: func(core.Launch) *hadoopyarn.ContainerLaunchContextProto {
			return &hadoopyarn.ContainerLaunchContextProto{}
		},
		Heartbeat:     time.Millisecond,
		FastHeartbeat: time.Millisecond,
	})
	require.NoError(t, err)
	require.Equal(t, core.Killed, res.Finish.Status, res.Finish.Diagnostics)
	require.Equal(t, core.KilledDiagnostics, res.Finish.Diagnostics)
	require.Equal(t, hadoopyarn.FinalApplicationStatusProto_APP_KILLED, f.finished.GetFinalApplicationStatus())
	require.Equal(t, core.KilledDiagnostics, f.finished.GetDiagnostics())
	require.Equal(t, 1, res.Started)
	require.Equal(t, 1, f.stopped, "the started container is stopped")
	require.True(t, fl.stopAll)
}
