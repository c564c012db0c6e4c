package main

import (
	"sort"

	"github.com/tfyarn/tfyarn/internal/yarn"
)

// sortApps orders newest first, the order people scan a list in; the RM's
// own order is a hash map's.
func sortApps(v []appView) {
	sort.SliceStable(v, func(i, j int) bool {
		a, errA := yarn.ParseApplicationID(v[i].ID)
		b, errB := yarn.ParseApplicationID(v[j].ID)
		if errA != nil || errB != nil {
			return v[i].ID > v[j].ID
		}
		if a.GetClusterTimestamp() != b.GetClusterTimestamp() {
			return a.GetClusterTimestamp() > b.GetClusterTimestamp()
		}
		return a.GetId() > b.GetId()
	})
}
