package follow

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// historyTimeout bounds keeping the history: the job is over, this is a
// bonus.
const historyTimeout = 10 * time.Second

// keepHistory writes the job's history record from the final report the
// AM served, when the AM could not write it itself (HDFS refused it: the
// job's delegation tokens past their lifetime, say), while this client has
// the user's login. A record the AM wrote (before it unregistered, so
// before the application is seen ended) is left alone. Best effort: a failure costs the task table of
// `tfyarn status`, not the job.
func (s *Follower) keepHistory(ctx context.Context) {
	if s.FS == nil || s.status == nil || s.status.last == nil || !s.status.last.Final || s.status.last.AppID != s.AppID {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), historyTimeout)
	defer cancel()
	if ok, err := s.FS.Exists(ctx, hdfs.HistoryPath(s.FS.User(), s.AppID)); err != nil || ok {
		return
	}
	data, err := json.MarshalIndent(s.status.last, "", "  ")
	if err != nil {
		return
	}
	_ = s.FS.WriteHistory(ctx, s.AppID, data)
}

// tellTheEndFromHistory tells the task changes of a job that ended before
// the client read the AM's final report (one shorter than a poll, or whose
// AM went before the client asked), from the history the AM wrote before
// unregistering. Nothing when there is none to read.
func (s *Follower) tellTheEndFromHistory(ctx context.Context, onEvent func(Event)) {
	if s.FS == nil || s.status == nil || (s.status.last != nil && s.status.last.Final) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), historyTimeout)
	defer cancel()
	data, err := s.FS.ReadHistory(ctx, s.FS.User(), s.AppID)
	if err != nil {
		return
	}
	var rep contract.StatusReport
	if json.Unmarshal(data, &rep) != nil {
		return
	}
	s.status.apply(s.AppID, &rep, onEvent)
}
