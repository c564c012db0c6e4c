package yarn

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// ActiveAppStates are the states of an application that has not ended, the
// default filter of `yarn application -list` and `tfyarn list`.
var ActiveAppStates = []hadoopyarn.YarnApplicationStateProto{
	hadoopyarn.YarnApplicationStateProto_NEW,
	hadoopyarn.YarnApplicationStateProto_NEW_SAVING,
	hadoopyarn.YarnApplicationStateProto_SUBMITTED,
	hadoopyarn.YarnApplicationStateProto_ACCEPTED,
	hadoopyarn.YarnApplicationStateProto_RUNNING,
}

// IsTerminal reports whether an application in state s will never change state again.
func IsTerminal(s hadoopyarn.YarnApplicationStateProto) bool {
	switch s {
	case hadoopyarn.YarnApplicationStateProto_FINISHED,
		hadoopyarn.YarnApplicationStateProto_FAILED,
		hadoopyarn.YarnApplicationStateProto_KILLED:
		return true
	}
	return false
}

// AppStateName is the name Hadoop's CLI prints, e.g. "RUNNING".
func AppStateName(s hadoopyarn.YarnApplicationStateProto) string { return s.String() }

// ParseAppState accepts a state name in any case ("running", "RUNNING").
func ParseAppState(name string) (hadoopyarn.YarnApplicationStateProto, error) {
	v, ok := hadoopyarn.YarnApplicationStateProto_value[strings.ToUpper(strings.TrimSpace(name))]
	if !ok {
		return 0, fmt.Errorf("yarn: unknown application state %q (one of %s)", name, strings.Join(AppStateNames(), ", "))
	}
	return hadoopyarn.YarnApplicationStateProto(v), nil
}

// AppStateNames lists every application state in lifecycle order.
func AppStateNames() []string {
	nums := make([]int, 0, len(hadoopyarn.YarnApplicationStateProto_name))
	for n := range hadoopyarn.YarnApplicationStateProto_name {
		nums = append(nums, int(n))
	}
	sort.Ints(nums)
	out := make([]string, len(nums))
	for i, n := range nums {
		out[i] = hadoopyarn.YarnApplicationStateProto_name[int32(n)]
	}
	return out
}

// FinalStatusName drops the proto prefix: APP_SUCCEEDED → "SUCCEEDED", as Java prints it.
func FinalStatusName(s hadoopyarn.FinalApplicationStatusProto) string {
	return strings.TrimPrefix(s.String(), "APP_")
}

// NodeStateName drops the proto prefix: NS_RUNNING → "RUNNING".
func NodeStateName(s hadoopyarn.NodeStateProto) string {
	return strings.TrimPrefix(s.String(), "NS_")
}

// QueueStateName drops the proto prefix: Q_RUNNING → "RUNNING".
func QueueStateName(s hadoopyarn.QueueStateProto) string {
	return strings.TrimPrefix(s.String(), "Q_")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
