package submit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tfyarn/tfyarn/internal/placement"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
	"google.golang.org/protobuf/proto"
)

// amNodes are the running nodes the ApplicationMaster may go to when the
// job excludes some (--exclude-nodes); nil when it excludes none. A
// submission that excludes every running node is refused: its AM could
// never start.
func amNodes(excluded []string, nodes []placement.Node) ([]placement.Node, error) {
	if len(excluded) == 0 || len(nodes) == 0 {
		return nil, nil
	}
	var allowed []placement.Node
	for _, n := range nodes {
		if !slices.Contains(excluded, nodeHost(n.ID)) {
			allowed = append(allowed, n)
		}
	}
	if len(allowed) == 0 {
		return nil, &taskspec.ValidationError{Message: fmt.Sprintf("--exclude-nodes excludes every running node (%d); leave at least one for the ApplicationMaster and the tasks", len(nodes))}
	}
	return allowed, nil
}

// amPlacement keeps the ApplicationMaster's container on nodes (amNodes):
// YARN takes no blacklist with a submission, but since Hadoop 2.9
// (YARN-6050) it takes the AM's container as several ResourceRequests:
// one per allowed node, one per their racks and the one for any node
// ("*"), the last two with relaxed locality off, so that the scheduler
// places it on one of the nodes only (the shape of an ApplicationMaster's
// own node-local ask, core.Ask.Localities). The RM takes the resource and
// label of the "*" request for all. nil nodes: nil, the AM goes anywhere.
func amPlacement(app *hadoopyarn.ApplicationSubmissionContextProto, nodes []placement.Node) []*hadoopyarn.ResourceRequestProto {
	if len(nodes) == 0 {
		return nil
	}
	req := func(name string, relax bool) *hadoopyarn.ResourceRequestProto {
		return &hadoopyarn.ResourceRequestProto{
			Priority:      &hadoopyarn.PriorityProto{Priority: proto.Int32(0)},
			ResourceName:  proto.String(name),
			Capability:    app.GetResource(),
			NumContainers: proto.Int32(1),
			RelaxLocality: proto.Bool(relax),
		}
	}
	var reqs []*hadoopyarn.ResourceRequestProto
	var racks []string
	for _, n := range nodes {
		reqs = append(reqs, req(nodeHost(n.ID), true))
		rack := n.Rack
		if rack == "" {
			rack = "/default-rack"
		}
		if !slices.Contains(racks, rack) {
			racks = append(racks, rack)
		}
	}
	for _, r := range racks {
		reqs = append(reqs, req(r, false))
	}
	anyNode := req("*", false)
	if app.NodeLabelExpression != nil {
		anyNode.NodeLabelExpression = proto.String(app.GetNodeLabelExpression())
	}
	return append(reqs, anyNode)
}

// nodeHost is a node's host, from its host:port id.
func nodeHost(id string) string {
	if i := strings.LastIndex(id, ":"); i >= 0 {
		return id[:i]
	}
	return id
}

// largestNodes is, per node label ("" for none), the memory of the
// largest of nodes: what --oom-grow grows a task's memory to at most.
func largestNodes(nodes []placement.Node) map[string]int64 {
	out := map[string]int64{}
	for _, n := range nodes {
		out[n.Label] = max(out[n.Label], n.MemoryMiB)
	}
	return out
}
