package submit

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/placement"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// --exclude-nodes keeps the AM off the nodes: its container is asked on
// the others only (their node requests, their racks' and "*" with relaxed
// locality off), with the submission's resource and label.
func TestAMPlacement(t *testing.T) {
	nodes := []placement.Node{{ID: "nm0.x:8041", Rack: "/r1"}, {ID: "nm1.x:8041"}, {ID: "nm2.x:8041", Rack: "/r1"}}
	allowed, err := amNodes([]string{"nm1.x"}, nodes)
	require.NoError(t, err)
	require.Equal(t, []placement.Node{nodes[0], nodes[2]}, allowed)

	app := &hadoopyarn.ApplicationSubmissionContextProto{Resource: yarn.NewResource(512, 1, nil), NodeLabelExpression: proto.String("cpu")}
	var got []string
	for _, r := range amPlacement(app, allowed) {
		got = append(got, r.GetResourceName()+map[bool]string{true: " relaxed", false: " only"}[r.GetRelaxLocality()]+" "+r.GetNodeLabelExpression())
		require.Equal(t, int32(1), r.GetNumContainers())
		require.Equal(t, app.GetResource(), r.GetCapability())
	}
	require.Equal(t, []string{"nm0.x relaxed ", "nm2.x relaxed ", "/r1 only ", "* only cpu"}, got)

	none, err := amNodes(nil, nodes)
	require.NoError(t, err)
	require.Nil(t, none)
	require.Nil(t, amPlacement(app, none), "no exclusion: the AM goes anywhere")
	_, err = amNodes([]string{"nm0.x", "nm1.x", "nm2.x"}, nodes)
	require.EqualError(t, err, "--exclude-nodes excludes every running node (3); leave at least one for the ApplicationMaster and the tasks")
}

// --oom-grow's cap: the largest node of each label.
func TestLargestNodes(t *testing.T) {
	got := largestNodes([]placement.Node{{MemoryMiB: 8192}, {MemoryMiB: 4096}, {Label: "gpu", MemoryMiB: 16384}})
	require.Equal(t, map[string]int64{"": 8192, "gpu": 16384}, got)
}
