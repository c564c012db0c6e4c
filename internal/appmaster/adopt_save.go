package appmaster

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// stateToSave is what this attempt leaves the next from a snapshot
// (amattempt.State): its address, the running table with each launcher's
// control port as it registered (controls, by container), and the
// restarts so far. ok is false once the job is decided: nothing more is
// saved then.
func stateToSave(snap Snapshot, am string, controls map[string]int) (st amattempt.State, ok bool) {
	if snap.Finish != nil {
		return st, false
	}
	table, adoptable := runningTable(snap.Tasks)
	if !adoptable {
		// Nothing adoptable: a table saved earlier no longer holds (a
		// restart or the job's end stops its tasks), and goes.
		table = nil
	}
	for i := range table {
		table[i].Control = controls[table[i].ContainerID]
	}
	r := snap.Record
	saved := &amattempt.Restarts{Counted: r.Counted, Uncounted: r.Uncounted, Cluster: r.Cluster, Replaced: r.Replaced, Causes: r.Causes, NodeFailures: r.NodeFailures}
	for _, x := range r.Excluded {
		saved.Excluded = append(saved.Excluded, amattempt.ExcludedNode{Host: x.Host, Reason: x.Reason})
	}
	return amattempt.State{AM: am, Tasks: table, Restarts: saved}, true
}

// resumedRecord is the restarts a previous attempt saved, as the core
// resumes them; nil when nothing was saved.
func resumedRecord(st *amattempt.State) *core.RestartRecord {
	if st == nil || st.Restarts == nil {
		return nil
	}
	r := st.Restarts
	rec := &core.RestartRecord{Counted: r.Counted, Uncounted: r.Uncounted, Cluster: r.Cluster, Replaced: r.Replaced, Causes: r.Causes, NodeFailures: r.NodeFailures}
	for _, x := range r.Excluded {
		rec.Excluded = append(rec.Excluded, core.ExcludedNode{Host: x.Host, Reason: x.Reason})
	}
	return rec
}

// stateStore is where this job's AM attempts keep their state for the next
// (amattempt.Store): the staging directory on HDFS, as the AM, with its
// keytab login or its delegation tokens.
func (s *amSecurity) stateStore() amattempt.Store {
	return amattempt.Store{Path: amattempt.Path(hdfs.StagingDir(s.jf.User, s.jf.AppID)), Read: s.readSmallFile, Write: s.replaceFile}
}

// readSmallFile reads the HDFS file p, refusing one larger than limit.
func (s *amSecurity) readSmallFile(ctx context.Context, p string, limit int64) ([]byte, error) {
	fs, err := hdfs.ConnectOptions(ctx, s.conf, s.hdfsOptions())
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	f, err := fs.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Size() > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", p, limit)
	}
	data := make([]byte, f.Size())
	if _, err = f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return data, nil
}

// replaceFile replaces the HDFS file p with data, not atomically.
func (s *amSecurity) replaceFile(ctx context.Context, p string, data []byte) error {
	fs, err := hdfs.ConnectOptions(ctx, s.conf, s.hdfsOptions())
	if err != nil {
		return err
	}
	defer fs.Close()
	if err := fs.RemoveAll(ctx, p); err != nil {
		return err
	}
	_, err = fs.UploadBytes(ctx, data, p)
	return err
}
