package appmaster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
	"google.golang.org/protobuf/proto"
)

// fakeCluster is an RM and NMs in one: allocate hands out one container per
// call while asked (as the CapacityScheduler does per node heartbeat), and
// a started container completes with exit(seq) on the next call.
type fakeCluster struct {
	mu          sync.Mutex
	noAlloc     bool
	hold        bool // started containers run until stopped
	allocErr    error
	exit        func(seq int64) int32
	outstanding int32
	seq         int64
	asks        []int32 // every NumContainers sent
	started     []*hadoopyarn.ContainerIdProto
	stopped     int
	stoppedIDs  []*hadoopyarn.ContainerIdProto
	finished    *hadoopyarn.FinishApplicationMasterRequestProto
	// preempt, when set, is announced (negotiable contract) in the next
	// answer, with allocateSent the time of each call.
	preempt      *hadoopyarn.ContainerIdProto
	allocateSent []time.Time
	preemptedIn  int // the call whose answer carried preempt
}

func (f *fakeCluster) Register(context.Context, string, int32, string) (*yarn.Registration, error) {
	return &yarn.Registration{Queue: "root.default", MaxCapability: yarn.NewResource(8192, 8, nil)}, nil
}

func (f *fakeCluster) Allocate(_ context.Context, asks []*hadoopyarn.ResourceRequestProto, _ []*hadoopyarn.ContainerIdProto, _ float32) (*yarn.Allocation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.allocErr != nil {
		return nil, f.allocErr
	}
	f.allocateSent = append(f.allocateSent, time.Now())
	for _, a := range asks {
		f.asks = append(f.asks, a.GetNumContainers())
		f.outstanding = a.GetNumContainers()
	}
	resp := &hadoopyarn.AllocateResponseProto{}
	for _, id := range f.started {
		if f.hold {
			break
		}
		resp.CompletedContainerStatuses = append(resp.CompletedContainerStatuses, &hadoopyarn.ContainerStatusProto{
			ContainerId: id, ExitStatus: proto.Int32(f.exit(id.GetId())),
		})
	}
	if !f.hold {
		f.started = nil
	}
	for _, id := range f.stoppedIDs {
		resp.CompletedContainerStatuses = append(resp.CompletedContainerStatuses, &hadoopyarn.ContainerStatusProto{
			ContainerId: id, ExitStatus: proto.Int32(core.ExitKilledByAppMaster),
		})
	}
	f.stoppedIDs = nil
	if f.outstanding > 0 && !f.noAlloc {
		f.outstanding--
		f.seq++
		resp.AllocatedContainers = []*hadoopyarn.ContainerProto{{
			Id:                  &hadoopyarn.ContainerIdProto{Id: proto.Int64(f.seq)},
			NodeId:              &hadoopyarn.NodeIdProto{Host: proto.String("nm"), Port: proto.Int32(1)},
			Resource:            yarn.NewResource(256, 1, nil),
			AllocationRequestId: proto.Int64(1),
			Priority:            &hadoopyarn.PriorityProto{Priority: proto.Int32(1)},
			// The fake NM reads the container back from its token.
			ContainerToken: &hadoopcommon.TokenProto{Identifier: []byte{byte(f.seq)}},
		}}
	}
	if f.preempt != nil {
		resp.Preempt = &hadoopyarn.PreemptionMessageProto{Contract: &hadoopyarn.PreemptionContractProto{
			Container: []*hadoopyarn.PreemptionContainerProto{{Id: f.preempt}},
		}}
		f.preempt = nil
		f.preemptedIn = len(f.allocateSent) - 1
	}
	return &yarn.Allocation{AllocateResponseProto: resp}, nil
}

func (f *fakeCluster) Finish(_ context.Context, s hadoopyarn.FinalApplicationStatusProto, diag, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finished = &hadoopyarn.FinishApplicationMasterRequestProto{FinalApplicationStatus: s.Enum(), Diagnostics: proto.String(diag)}
	return nil
}

func (f *fakeCluster) StartContainers(_ context.Context, _ string, reqs []yarn.StartRequest) (*yarn.StartResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &yarn.StartResult{}
	for _, r := range reqs {
		id := &hadoopyarn.ContainerIdProto{Id: proto.Int64(int64(r.ContainerToken.GetIdentifier()[0]))}
		out.Started = append(out.Started, id)
		f.started = append(f.started, id)
	}
	return out, nil
}

func (f *fakeCluster) StopContainers(_ context.Context, _ string, ids []*hadoopyarn.ContainerIdProto) ([]*hadoopyarn.ContainerIdProto, []*yarn.ContainerError, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped += len(ids)
	f.stoppedIDs = append(f.stoppedIDs, ids...)
	return ids, nil, nil
}

func runFakeLoop(t *testing.T, ctx context.Context, f *fakeCluster, workers int) LoopResult {
	t.Helper()
	res, err := Loop(ctx, fakeLoopConfig(t, f, workers))
	require.NoError(t, err)
	require.True(t, res.Unregistered)
	require.NotNil(t, f.finished)
	return res
}

// fakeLoopConfig runs workers one-vcore workers of "true" against f, heartbeating every ms.
func fakeLoopConfig(t *testing.T, f *fakeCluster, workers int) LoopConfig {
	t.Helper()
	g, err := taskspec.ParseSpec(taskspec.Worker, fmt.Sprintf("%dx1c,256m", workers))
	require.NoError(t, err)
	return LoopConfig{
		Job: taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "true"},
		RM:  f,
		NM:  f,
		LaunchContext: func(core.Launch) *hadoopyarn.ContainerLaunchContextProto {
			return &hadoopyarn.ContainerLaunchContextProto{}
		},
		Heartbeat:     time.Millisecond,
		FastHeartbeat: time.Millisecond,
		MaxRMFailures: 3,
	}
}

func TestLoopAllSucceed(t *testing.T) {
	f := &fakeCluster{exit: func(int64) int32 { return 0 }}
	res := runFakeLoop(t, context.Background(), f, 3)
	require.Equal(t, core.Succeeded, res.Finish.Status)
	require.Equal(t, hadoopyarn.FinalApplicationStatusProto_APP_SUCCEEDED, f.finished.GetFinalApplicationStatus())
	require.Equal(t, "all 3 tasks succeeded", f.finished.GetDiagnostics())
	require.Equal(t, []int32{3}, f.asks, "one absolute ask, never resent")
	require.Equal(t, 3, res.Allocated)
	require.Equal(t, 3, res.Started)
	require.False(t, res.AllStartedAt.IsZero())
}

func TestLoopTaskFails(t *testing.T) {
	f := &fakeCluster{exit: func(seq int64) int32 {
		if seq == 1 {
			return 3
		}
		return 0
	}}
	res := runFakeLoop(t, context.Background(), f, 3)
	require.Equal(t, core.Failed, res.Finish.Status)
	require.Equal(t, hadoopyarn.FinalApplicationStatusProto_APP_FAILED, f.finished.GetFinalApplicationStatus())
	require.Contains(t, f.finished.GetDiagnostics(), "worker:0 (container ")
	require.Contains(t, f.finished.GetDiagnostics(), "exit code 3")
}

func TestLoopGivesUpOnTheRM(t *testing.T) {
	f := &fakeCluster{allocErr: errors.New("connection refused")}
	res := runFakeLoop(t, context.Background(), f, 1)
	require.Equal(t, core.Failed, res.Finish.Status)
	require.Contains(t, f.finished.GetDiagnostics(), "lost the ResourceManager")
	require.Contains(t, f.finished.GetDiagnostics(), "connection refused")
}

func TestLoopCancelledStillUnregisters(t *testing.T) {
	f := &fakeCluster{noAlloc: true}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	res := runFakeLoop(t, ctx, f, 1)
	require.Equal(t, core.Killed, res.Finish.Status)
	require.Equal(t, hadoopyarn.FinalApplicationStatusProto_APP_KILLED, f.finished.GetFinalApplicationStatus())
}

// A SIGTERM to attempt 1 of a job that allows 2 (a preemption of the AM looks the same as a
// kill): the job is decided KILLED and the tasks stopped, but the AM does not unregister, so
// that YARN may start attempt 2; BeforeUnregister hears the hand-over (am.go keeps the staging
// directory then).
func TestLoopCancelledWithAttemptsLeftHandsOver(t *testing.T) {
	f := &fakeCluster{noAlloc: true}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	var before []core.Finish
	cfg := fakeLoopConfig(t, f, 1)
	cfg.BeforeUnregister = func(_ context.Context, fin core.Finish) { before = append(before, fin) }
	cfg.Attempt, cfg.Attempts = 1, 2
	res, err := Loop(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, core.Killed, res.Finish.Status)
	require.True(t, res.Finish.HandOver)
	require.False(t, res.Unregistered)
	require.Nil(t, f.finished, "no unregister: YARN decides whether attempt 2 follows")
	require.Len(t, before, 1)
	require.True(t, before[0].HandOver)
}

func TestShellJoin(t *testing.T) {
	require.Equal(t, `sh -c 'exit 0'`, ShellJoin([]string{"sh", "-c", "exit 0"}))
	require.Equal(t, `echo 'it'\''s' '' a=b,c`, ShellJoin([]string{"echo", "it's", "", "a=b,c"}))
	require.Equal(t, `'$HOME' '*'`, ShellJoin([]string{"$HOME", "*"}))
}

// Nothing of the job's program is in a task's launch context: the
// NodeManager rewrites {{ }}, <CPS> and <LOG_DIR> there and pastes commands
// and environment values into a bash script. The launcher gets them from
// the AM (TaskProgram), byte for byte.
func TestTaskLaunchContextHoldsNoProgram(t *testing.T) {
	hostile := []string{"{{(touch /tmp/X)}}", "<CPS>", "<LOG_DIR>", "$(id)", "`id`", "'", `"`, `\`, "a\nb", "\xff\xfe"}
	jf := contract.JobFile{AppID: "application_1_0001", User: "alice",
		TaskResources: map[string]hdfs.Resource{contract.BinaryName: {Scheme: "hdfs", Path: "/c/tfyarn"}},
		Job:           taskspec.Job{Command: "printf\xff", Args: hostile, Env: map[string]string{"HOSTILE": strings.Join(hostile, "")}},
		Commands:      map[taskspec.TaskType][]string{taskspec.TensorBoard: append([]string{"tb"}, hostile...)}}
	for _, typ := range []taskspec.TaskType{taskspec.Worker, taskspec.TensorBoard} {
		clc := TaskLaunchContext(jf, core.Launch{Task: taskspec.TaskID{Type: typ}}, "am:1", nil)
		require.Equal(t, []string{`./tfyarn task 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr`}, clc.Command)
		for _, kv := range clc.Environment {
			require.NotEqual(t, "HOSTILE", kv.GetKey())
			for _, h := range hostile {
				require.NotContains(t, kv.GetValue(), h, kv.GetKey())
			}
		}
	}
	program := TaskProgram(jf, nil, nil)
	p, ok := program(taskspec.TaskID{Type: taskspec.Worker, Index: 3})
	require.True(t, ok)
	require.Equal(t, append([]string{"printf\xff"}, hostile...), p.Argv)
	require.Equal(t, jf.Job.Env, p.Env)
	p, _ = program(taskspec.TaskID{Type: taskspec.TensorBoard})
	require.Equal(t, append([]string{"tb"}, hostile...), p.Argv)
}

func TestTaskLaunchContext(t *testing.T) {
	bin := hdfs.Resource{Scheme: "hdfs", Host: "nn", Port: 8020, Path: "/user/alice/.tfyarn/cache/ab/tfyarn", Size: 10, Timestamp: 20}
	jf := contract.JobFile{AppID: "application_1_0001", User: "alice", TaskResources: map[string]hdfs.Resource{contract.BinaryName: bin},
		Job: taskspec.Job{Command: "sh", Args: []string{"-c", "exit 3"}, Env: map[string]string{"A": "1"}}}
	clc := TaskLaunchContext(jf, core.Launch{Task: taskspec.TaskID{Type: taskspec.Worker, Index: 2}, Attempt: 2, Restart: 1, Port: 2345}, "am-host:4242", []byte("tok"))
	require.Equal(t, []string{`./tfyarn task 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr`}, clc.Command)
	env := map[string]string{}
	for _, kv := range clc.Environment {
		env[kv.GetKey()] = kv.GetValue()
	}
	require.Equal(t, map[string]string{contract.EnvTask: "worker:2", contract.EnvTaskType: "worker", contract.EnvTaskIndex: "2",
		contract.EnvTaskAttempt: "2", contract.EnvRestart: "1", contract.EnvRetakePort: "2345",
		contract.EnvAppID: "application_1_0001", "HADOOP_USER_NAME": "alice",
		contract.EnvAMAddress: "am-host:4242"}, env)
	require.Equal(t, []byte("tok"), clc.Tokens)
	require.Len(t, clc.LocalResources, 1)
	require.Equal(t, contract.BinaryName, clc.LocalResources[0].GetKey())
	require.Equal(t, "/user/alice/.tfyarn/cache/ab/tfyarn", clc.LocalResources[0].GetValue().GetResource().GetFile())
}

func TestTaskTokensDropTheAMRMTokenAndCarryTheSecret(t *testing.T) {
	creds := security.NewCredentials()
	creds.AddToken("amrm", security.Token{Kind: security.KindAMRMToken, Identifier: []byte("id"), Password: []byte("pw")})
	creds.AddToken("hdfs", security.Token{Kind: "HDFS_DELEGATION_TOKEN", Identifier: []byte("id2"), Password: []byte("pw2")})
	secret := bytes.Repeat([]byte{7}, rendezvous.SecretSize)
	back, err := security.ParseCredentials(TaskTokens(creds, secret))
	require.NoError(t, err)
	require.Empty(t, back.TokensOfKind(security.KindAMRMToken))
	require.Len(t, back.TokensOfKind("HDFS_DELEGATION_TOKEN"), 1)
	got, err := rendezvous.SecretFrom(back)
	require.NoError(t, err)
	require.Equal(t, secret, got)
	require.Equal(t, 2, creds.NumTokens(), "the AM's own credentials are untouched")
	require.Zero(t, creds.NumSecrets())
}
