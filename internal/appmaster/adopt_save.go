package appmaster

import (
	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
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
	return amattempt.State{AM: am, Tasks: table, Restarts: &amattempt.Restarts{Counted: r.Counted, Uncounted: r.Uncounted, Cluster: r.Cluster, Causes: r.Causes}}, true
}

// resumedRecord is the restarts a previous attempt saved, as the core
// resumes them; nil when nothing was saved.
func resumedRecord(st *amattempt.State) *core.RestartRecord {
	if st == nil || st.Restarts == nil {
		return nil
	}
	r := st.Restarts
	return &core.RestartRecord{Counted: r.Counted, Uncounted: r.Uncounted, Cluster: r.Cluster, Causes: r.Causes}
}
