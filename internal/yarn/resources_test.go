package yarn

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

func info(k string, v int64, units string) *hadoopyarn.ResourceInformationProto {
	return &hadoopyarn.ResourceInformationProto{Key: proto.String(k), Value: proto.Int64(v), Units: proto.String(units)}
}

func TestResourceHelpers(t *testing.T) {
	// What the RM sends for a test-cluster node: fields and map both set.
	node := &hadoopyarn.ResourceProto{
		Memory: proto.Int64(8192), VirtualCores: proto.Int32(8),
		ResourceValueMap: []*hadoopyarn.ResourceInformationProto{
			info("memory-mb", 8192, "Mi"), info("vcores", 8, ""), info("yarn.io/gpu", 2, ""),
		},
	}
	for _, tc := range []struct {
		name          string
		r             *hadoopyarn.ResourceProto
		mem, vc, gpus int64
		custom        map[string]int64
	}{
		{"nil", nil, 0, 0, 0, map[string]int64{}},
		{"empty", &hadoopyarn.ResourceProto{}, 0, 0, 0, map[string]int64{}},
		{"node", node, 8192, 8, 2, map[string]int64{"yarn.io/gpu": 2}},
		{"fields win over map", &hadoopyarn.ResourceProto{
			Memory: proto.Int64(100), VirtualCores: proto.Int32(1),
			ResourceValueMap: []*hadoopyarn.ResourceInformationProto{info("memory-mb", 5, "Mi")},
		}, 100, 1, 0, map[string]int64{}},
		{"map only, Gi", &hadoopyarn.ResourceProto{
			ResourceValueMap: []*hadoopyarn.ResourceInformationProto{info("memory-mb", 2, "Gi"), info("vcores", 3, "")},
		}, 2048, 3, 0, map[string]int64{}},
		{"beyond int32 memory", &hadoopyarn.ResourceProto{Memory: proto.Int64(1 << 40)}, 1 << 40, 0, 0, map[string]int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.mem, MemoryMiB(tc.r))
			require.Equal(t, tc.vc, VCores(tc.r))
			require.Equal(t, tc.gpus, GPUs(tc.r))
			require.Equal(t, tc.custom, CustomResources(tc.r))
		})
	}
}

func TestResourceValuePresence(t *testing.T) {
	r := NewResource(1024, 2, map[string]int64{"yarn.io/gpu": 0, "yarn.io/fpga": 1})
	v, ok := ResourceValue(r, ResourceGPU)
	require.True(t, ok, "an explicit 0 GPUs is present")
	require.Zero(t, v)
	_, ok = ResourceValue(r, "example.com/tpu")
	require.False(t, ok)
	v, ok = ResourceValue(r, ResourceMemory)
	require.True(t, ok)
	require.EqualValues(t, 1024, v)
	_, ok = ResourceValue(&hadoopyarn.ResourceProto{}, ResourceVCores)
	require.False(t, ok)
	// Map entries come out sorted so the wire bytes are deterministic.
	require.Equal(t, "yarn.io/fpga", r.GetResourceValueMap()[0].GetKey())
	require.Equal(t, "yarn.io/gpu", r.GetResourceValueMap()[1].GetKey())
}
