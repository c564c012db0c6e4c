package submit

import (
	"context"
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// rmFeatures is what the ResourceManager supports of what a job may need. The RM says no version
// over RPC, so tfyarn asks for the feature itself: getResourceTypeInfo came with resource types
// (Hadoop 3.0), and the placement constraints of SchedulingRequests (Hadoop 3.1) after them. An
// older RM answers the call with RpcNoSuchMethodException, and it would ignore both a GPU ask
// (ResourceProto's resource_value_map) and a SchedulingRequest (AllocateRequest's
// scheduling_requests) as unknown protobuf fields: the job would wait for containers that
// never come, or run without its GPUs. Such a job is refused before anything is created.
type rmFeatures struct {
	resourceTypes bool // yarn.io/gpu and other resource types
	placement     bool // placement constraints (--spread, --colocate, --apart)
}

// typeInfoAsker is the ApplicationClient's one call the probe makes.
type typeInfoAsker interface {
	GetResourceTypeInfo(ctx context.Context) ([]*hadoopyarn.ResourceTypeInfoProto, error)
}

// probeFeatures asks the RM for its resource types: an answer means Hadoop 3; an unknown method,
// an RM before it. Any other error is the caller's (the RM is unreachable or refused us).
func probeFeatures(ctx context.Context, rm typeInfoAsker) (rmFeatures, error) {
	_, err := rm.GetResourceTypeInfo(ctx)
	if err == nil {
		return rmFeatures{resourceTypes: true, placement: true}, nil
	}
	if yarn.IsUnknownMethod(err) {
		return rmFeatures{}, nil
	}
	return rmFeatures{}, err
}

// checkFeatures refuses, in one line, a job that needs what the RM lacks.
func checkFeatures(job Job, f rmFeatures) error {
	const old = "the ResourceManager predates Hadoop 3 (it does not know getResourceTypeInfo)"
	if !f.resourceTypes {
		for _, g := range job.Tasks {
			if g.Resources.GPUs > 0 {
				return &taskspec.ValidationError{TaskType: g.Type, Message: fmt.Sprintf(
					"%s asks %d yarn.io/gpu per task, but %s and has no resource types; drop the GPUs or use a cluster of Hadoop 3.1 or newer", g.Type, g.Resources.GPUs, old)}
			}
		}
	}
	if !f.placement {
		var flags []string
		if job.Spread != "" {
			flags = append(flags, "--spread "+job.Spread)
		}
		for _, a := range job.Affinities {
			flags = append(flags, a.Flag())
		}
		if len(flags) > 0 {
			return &taskspec.ValidationError{Message: fmt.Sprintf(
				"%s asks for YARN placement constraints, but %s and has none; drop it or use a cluster of Hadoop 3.1 or newer", strings.Join(flags, ", "), old)}
		}
	}
	return nil
}
