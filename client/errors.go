package client

import (
	"fmt"
	"strings"
)

// QueueError: the job names a queue the scheduler does not have.
type QueueError struct {
	Queue string
	Known []string // leaf queues, the ones applications go to
}

func (e *QueueError) Error() string {
	return fmt.Sprintf("queue %q does not exist; known queues: %s", e.Queue, strings.Join(e.Known, ", "))
}

// JobError: the application ended without succeeding. Result has the
// details; the error exists so callers that only check err notice.
type JobError struct{ Result *Result }

func (e *JobError) Error() string {
	r := e.Result
	msg := fmt.Sprintf("%s ended %s", r.AppID, r.FinalStatus)
	if r.Diagnostics != "" {
		msg += ": " + r.Diagnostics
	}
	return msg
}
