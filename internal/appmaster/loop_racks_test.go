package appmaster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
	"google.golang.org/protobuf/proto"
)

// updatingRM is the fake cluster whose allocate also reports node updates.
type updatingRM struct {
	*fakeCluster
	updated []*hadoopyarn.NodeReportProto
}

func (u *updatingRM) Allocate(ctx context.Context, asks []*hadoopyarn.ResourceRequestProto, rel []*hadoopyarn.ContainerIdProto, p float32) (*yarn.Allocation, error) {
	a, err := u.fakeCluster.Allocate(ctx, asks, rel, p)
	if err == nil {
		a.UpdatedNodes = u.updated
	}
	return a, err
}

// The machine hears the nodes' racks from both of the AM's sources: the
// getClusterNodes answer, taken in the background without holding up the
// loop, and allocate's updated_nodes, which win as the later word.
func TestLoopLearnsNodeRacks(t *testing.T) {
	report := func(host, rack string) *hadoopyarn.NodeReportProto {
		return &hadoopyarn.NodeReportProto{NodeId: &hadoopyarn.NodeIdProto{Host: proto.String(host), Port: proto.Int32(8041)}, RackName: proto.String(rack)}
	}
	rm := &updatingRM{fakeCluster: &fakeCluster{noAlloc: true}, updated: []*hadoopyarn.NodeReportProto{report("n2", "/dc/r9")}}
	answer := make(chan struct{})
	l, err := newLoop(LoopConfig{
		Job: taskspec.Job{Tasks: []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 256}}}, Command: "true"},
		RM:  rm, NM: rm.fakeCluster,
		NodeRacks: func(context.Context) (map[string]string, error) {
			<-answer
			return map[string]string{"n1": "/dc/r1", "n2": "/dc/r2"}, nil
		},
	})
	require.NoError(t, err)
	ctx := context.Background()
	l.fetchRacks(ctx)
	l.takeRacks()
	require.Empty(t, l.m.Rack("n1"), "not waited for")
	close(answer)
	require.Eventually(t, func() bool { l.takeRacks(); return l.m.Rack("n1") == "/dc/r1" }, 5*time.Second, time.Millisecond)
	require.Equal(t, "/dc/r2", l.m.Rack("n2"))
	l.heartbeat(ctx)
	require.Equal(t, "/dc/r9", l.m.Rack("n2"), "allocate's updated_nodes")
	require.Equal(t, "/dc/r1", l.m.Rack("n1"))
}
