package yarn

import (
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// Names of the resource types every tfyarn job deals with.
const (
	ResourceMemory = "memory-mb"
	ResourceVCores = "vcores"
	ResourceGPU    = "yarn.io/gpu"
)

// memoryUnits converts a memory-mb entry's units to MiB. Hadoop normally
// sends "Mi", but a resource_value_map entry may carry any of these.
var memoryUnits = map[string]float64{
	"": 1, "Mi": 1, "M": 1, "Ki": 1.0 / 1024, "k": 1.0 / 1024, "Gi": 1024, "G": 1024, "Ti": 1024 * 1024, "T": 1024 * 1024,
}

// MemoryMiB returns r's memory in MiB. The dedicated int64 field is
// authoritative; the resource_value_map entry is a fallback for senders that
// only fill the map.
func MemoryMiB(r *hadoopyarn.ResourceProto) int64 {
	if r == nil {
		return 0
	}
	if r.Memory != nil {
		return r.GetMemory()
	}
	if e := entry(r, ResourceMemory); e != nil {
		if f, ok := memoryUnits[e.GetUnits()]; ok {
			return int64(float64(e.GetValue()) * f)
		}
	}
	return 0
}

// VCores returns r's virtual cores, with the same fallback as MemoryMiB.
func VCores(r *hadoopyarn.ResourceProto) int64 {
	if r == nil {
		return 0
	}
	if r.VirtualCores != nil {
		return int64(r.GetVirtualCores())
	}
	if e := entry(r, ResourceVCores); e != nil {
		return e.GetValue()
	}
	return 0
}

// GPUs returns r's yarn.io/gpu amount (0 when absent).
func GPUs(r *hadoopyarn.ResourceProto) int64 {
	v, _ := ResourceValue(r, ResourceGPU)
	return v
}

// ResourceValue returns the amount of the named resource type. Memory and
// vcores are answered from their dedicated fields; ok is false when r does
// not mention the type at all, which for custom types means the sender does
// not know it (the RM drops unknown types silently).
func ResourceValue(r *hadoopyarn.ResourceProto, name string) (value int64, ok bool) {
	switch name {
	case ResourceMemory:
		return MemoryMiB(r), r != nil && (r.Memory != nil || entry(r, name) != nil)
	case ResourceVCores:
		return VCores(r), r != nil && (r.VirtualCores != nil || entry(r, name) != nil)
	}
	if e := entry(r, name); e != nil {
		return e.GetValue(), true
	}
	return 0, false
}

// CustomResources returns the resource_value_map entries other than memory
// and vcores, by name.
func CustomResources(r *hadoopyarn.ResourceProto) map[string]int64 {
	out := map[string]int64{}
	for _, e := range r.GetResourceValueMap() {
		if k := e.GetKey(); k != ResourceMemory && k != ResourceVCores {
			out[k] = e.GetValue()
		}
	}
	return out
}

// NewResource builds a ResourceProto; custom holds extra countable types
// such as yarn.io/gpu (zero amounts are kept: asking for 0 GPUs is explicit).
func NewResource(memoryMiB int64, vcores int32, custom map[string]int64) *hadoopyarn.ResourceProto {
	r := &hadoopyarn.ResourceProto{
		Memory:       proto.Int64(memoryMiB),
		VirtualCores: proto.Int32(vcores),
	}
	for _, k := range sortedKeys(custom) {
		r.ResourceValueMap = append(r.ResourceValueMap, &hadoopyarn.ResourceInformationProto{
			Key:   proto.String(k),
			Value: proto.Int64(custom[k]),
		})
	}
	return r
}

func entry(r *hadoopyarn.ResourceProto, name string) *hadoopyarn.ResourceInformationProto {
	for _, e := range r.GetResourceValueMap() {
		if e.GetKey() == name {
			return e
		}
	}
	return nil
}
