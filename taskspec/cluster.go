package taskspec

import (
	"fmt"
	"net"
	"sort"
	"strconv"
)

// ClusterSpec is a job's cluster as the rendezvous publishes it: for each
// task type in the cluster (TaskType.InCluster), its tasks' "host:port"
// addresses by index. Each framework turns it into what its programs read
// (package internal/framework).
type ClusterSpec map[TaskType][]string

// ClusterSpecFromAddresses builds the cluster of a job whose tasks have
// reported their addresses. It insists on a complete picture: every chief,
// worker and ps task of groups has an address, and no address belongs to a
// task outside groups, because a cluster with a hole hangs a framework's
// rendezvous instead of failing. Evaluator and tensorboard addresses may be
// present and are left out: they are not in the cluster.
func ClusterSpecFromAddresses(groups []TaskGroup, addrs map[TaskID]string) (ClusterSpec, error) {
	size := map[TaskType]int{}
	for _, g := range groups {
		size[g.Type] = g.Instances
	}
	ids := make([]TaskID, 0, len(addrs))
	for id := range addrs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return lessTaskID(ids[i], ids[j]) })
	for _, id := range ids {
		n, ok := size[id.Type]
		if !ok || id.Index < 0 || id.Index >= n {
			return nil, fmt.Errorf("cluster spec: address %q is for %s, which is not a task of the job", addrs[id], id)
		}
		if err := checkHostPort(addrs[id]); err != nil {
			return nil, fmt.Errorf("cluster spec: %s: %w", id, err)
		}
	}
	cluster := ClusterSpec{}
	for _, g := range groups {
		if !g.Type.InCluster() {
			continue
		}
		hosts := make([]string, g.Instances)
		for i := range hosts {
			addr, ok := addrs[TaskID{Type: g.Type, Index: i}]
			if !ok {
				return nil, fmt.Errorf("cluster spec: no address for %s:%d", g.Type, i)
			}
			hosts[i] = addr
		}
		cluster[g.Type] = hosts
	}
	return cluster, nil
}

func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q is not host:port", addr)
	}
	if n, err := strconv.Atoi(port); host == "" || err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("address %q is not host:port with a port in 1-65535", addr)
	}
	return nil
}

func lessTaskID(a, b TaskID) bool {
	ra, rb := jobOrder[a.Type], jobOrder[b.Type]
	if ra != rb {
		return ra < rb
	}
	if a.Type != b.Type {
		return a.Type < b.Type
	}
	return a.Index < b.Index
}
