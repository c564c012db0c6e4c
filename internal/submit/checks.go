package submit

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// QueueError: the job names a queue the scheduler does not have
// (client.QueueError).
type QueueError struct {
	Queue string
	Known []string // leaf queues, the ones applications go to
}

func (e *QueueError) Error() string {
	return fmt.Sprintf("queue %q does not exist; known queues: %s", e.Queue, strings.Join(e.Known, ", "))
}

// checkQueue fails with a QueueError naming the known queues when the
// scheduler has no such queue (the RM answers an unknown name with an empty
// report, not an error).
func checkQueue(ctx context.Context, rm *yarn.ApplicationClient, queue string) error {
	q, err := rm.GetQueueInfo(ctx, queue, yarn.QueueInfoOptions{})
	if err != nil {
		return fmt.Errorf("client: checking queue %q: %w", queue, err)
	}
	if q.GetQueueName() != "" {
		return nil
	}
	root, err := rm.GetQueueInfo(ctx, "root", yarn.QueueInfoOptions{Recursive: true})
	if err != nil {
		return fmt.Errorf("client: listing queues: %w", err)
	}
	var leaves []string
	var walk func(*hadoopyarn.QueueInfoProto)
	walk = func(q *hadoopyarn.QueueInfoProto) {
		if len(q.GetChildQueues()) == 0 {
			leaves = append(leaves, q.GetQueueName())
		}
		for _, c := range q.GetChildQueues() {
			walk(c)
		}
	}
	walk(root)
	sort.Strings(leaves)
	return &QueueError{Queue: queue, Known: leaves}
}

// checkFits validates the job against the cluster's largest container: every
// task group, and the AM itself.
func checkFits(job Job, resp *hadoopyarn.GetNewApplicationResponseProto, types []*hadoopyarn.ResourceTypeInfoProto) error {
	limits := yarn.LimitsFrom(resp.GetMaximumCapability(), types)
	if err := job.Validate(limits); err != nil {
		return err
	}
	am := taskspec.TaskGroup{Type: "ApplicationMaster", Instances: 1,
		Resources: taskspec.Resources{VCores: job.AMVCores, MemoryMiB: job.AMMemoryMiB}}
	return taskspec.CheckFits(am, limits)
}
