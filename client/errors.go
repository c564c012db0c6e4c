package client

import (
	"fmt"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/explain"
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

// ExplainError is the one line a person should read for an error of this
// package that is about the cluster or its configuration: a malformed or
// unknown application id, a configuration that cannot be loaded, a
// ResourceManager or NameNode that cannot be reached, does not answer within
// callTimeout or refuses, Kerberos on one side only. confFrom says where the
// configuration came from ("HADOOP_CONF_DIR=/etc/hadoop"). "" for any other
// error (the job's own failure, a cancelled context, a local file): its
// Error() is then the best words. The words are internal/explain's.
func ExplainError(err error, confFrom string, callTimeout time.Duration) string {
	return explain.Line(err, confFrom, callTimeout)
}
