package follow

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/internal/placement"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// waitGPUs reads the GPUs and label of a waiting line's shape
// (core.Shape: "1 vcores, 1024 MiB, 1 GPUs, label \"gpu\"").
var waitGPUs = regexp.MustCompile(`, (\d+) GPUs, label "([^"]*)"\)`)

// explainWait says who holds the GPUs a waiting line awaits, from the
// ResourceManager's node and application reports: "2 of 2 GPUs on nodes
// labelled gpu in use; applications holding GPUs: application_1_0001 (2)".
// "" for a line that awaits no GPU, or when the RM does not answer.
func (s *Follower) explainWait(ctx context.Context, line string) string {
	m := waitGPUs.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	if n, _ := strconv.Atoi(m[1]); n == 0 {
		return ""
	}
	label := m[2]
	cctx, cancel := s.call(ctx)
	defer cancel()
	nodes, err := s.RM.GetClusterNodes(cctx, hadoopyarn.NodeStateProto_NS_RUNNING)
	if err != nil {
		return ""
	}
	var used, total int64
	for _, n := range nodes {
		nl := ""
		if l := n.GetNodeLabels(); len(l) > 0 {
			nl = l[0]
		}
		if nl == label {
			used += yarn.GPUs(n.GetUsed())
			total += yarn.GPUs(n.GetCapability())
		}
	}
	out := fmt.Sprintf("%d of %d GPUs on %s in use", used, total, placement.LabelName(label))
	apps, err := s.RM.GetApplications(cctx, yarn.ApplicationFilter{States: []hadoopyarn.YarnApplicationStateProto{hadoopyarn.YarnApplicationStateProto_RUNNING}})
	if err != nil {
		return out
	}
	var holders []string
	for _, a := range apps {
		id := yarn.FormatApplicationID(a.GetApplicationId())
		if id == s.AppID {
			continue
		}
		if g := yarn.GPUs(a.GetAppResource_Usage().GetUsedResources()); g > 0 {
			holders = append(holders, fmt.Sprintf("%s (%d)", id, g))
		}
	}
	sort.Strings(holders)
	if len(holders) > 0 {
		out += "; applications holding GPUs: " + strings.Join(holders, ", ")
	}
	return out
}
