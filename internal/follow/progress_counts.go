package follow

import "github.com/tfyarn/tfyarn/jobreport"

// countsAtEvents gives each of one poll's task changes (in the order
// taskChanges returns them) the tasks' counts as they were right after that
// change, not those the poll ended with: a poll that saw worker:0 launch
// and register prints "0 registered" with the launch. It steps from the
// previous poll's counts; the last change gets the current counts exactly.
func countsAtEvents(prev jobreport.Counts, cur jobreport.Counts, evs []Event) {
	c := prev
	c.Total = cur.Total
	for i := range evs {
		switch evs[i].TaskChange {
		case TaskLaunched:
			c.Allocated++
			c.Running++
		case TaskRegistered:
			c.Registered++
		case TaskEnded:
			c.Ended++
			c.Running--
		}
		at := clampCounts(c, cur)
		if i == len(evs)-1 {
			at = cur
		}
		evs[i].Counts = &at
	}
}

// clampCounts keeps stepped counts within what is possible: never negative,
// never above the total, never above what the poll ended with for counts
// that only grow (allocated, registered, ended).
func clampCounts(c, cur jobreport.Counts) jobreport.Counts {
	lim := func(v, max int) int {
		if v < 0 {
			return 0
		}
		if v > max {
			return max
		}
		return v
	}
	c.Allocated = lim(c.Allocated, cur.Allocated)
	c.Registered = lim(c.Registered, cur.Registered)
	c.Ended = lim(c.Ended, cur.Ended)
	c.Running = lim(c.Running, c.Total)
	return c
}
