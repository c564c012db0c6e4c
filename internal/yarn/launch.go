package yarn

import (
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// LogDirVar is what YARN replaces with the container's log directory in a
// launch command (Hadoop's ApplicationConstants.LOG_DIR_EXPANSION_VAR).
const LogDirVar = "<LOG_DIR>"

// EnvProto renders an environment, sorted so launch contexts compare.
func EnvProto(env map[string]string) []*hadoopyarn.StringStringMapProto {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*hadoopyarn.StringStringMapProto, len(keys))
	for i, k := range keys {
		out[i] = &hadoopyarn.StringStringMapProto{Key: proto.String(k), Value: proto.String(env[k])}
	}
	return out
}

// LimitsFrom turns the RM's maximum allocation and resource types (from
// getNewApplication or registerApplicationMaster) into ClusterLimits. types
// may be nil when the caller learnt them elsewhere; then only a GPU entry in
// maxCap tells that the RM knows GPUs.
func LimitsFrom(maxCap *hadoopyarn.ResourceProto, types []*hadoopyarn.ResourceTypeInfoProto) taskspec.ClusterLimits {
	if maxCap == nil {
		return taskspec.ClusterLimits{}
	}
	maxGPUs, knows := ResourceValue(maxCap, ResourceGPU)
	for _, t := range types {
		if t.GetName() == ResourceGPU {
			knows = true
		}
	}
	return taskspec.ClusterLimits{
		Known:        true,
		MaxMemoryMiB: MemoryMiB(maxCap),
		MaxVCores:    int32(VCores(maxCap)),
		KnowsGPUs:    knows,
		MaxGPUs:      maxGPUs,
	}
}

// The launch-context variables that ask a NodeManager with
// LinuxContainerExecutor for its Docker runtime (Hadoop's
// DockerLinuxContainerRuntime and ContainerRuntimeConstants).
const (
	EnvRuntimeType   = "YARN_CONTAINER_RUNTIME_TYPE" // "docker"
	EnvDockerImage   = contract.EnvDockerImage
	EnvDockerNetwork = "YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK"
	EnvDockerMounts  = "YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS" // SRC:DST:ro|rw,...
)
