package core

import "fmt"

// Log rules (--fail-on-log, --exclude-node-on-log): the task's launcher
// matches each line its program writes to stderr against the job's RE2
// expressions and, at the first match, ends the program and says which
// rule matched which line in its exit report (ContainerCompleted.LogRule).
// The machine decides what follows:
//
//   - --fail-on-log: the job ends FAILED with the line, whatever the
//     restart policy and the success rule would say: the program said it
//     cannot go on (an unrecoverable error it logs and then hangs on, say).
//   - --exclude-node-on-log: the attempt fails and its node is excluded at
//     once (badnodes.go), whatever --max-node-failures says: the line names
//     a fault of the node ("Xid 79", "uncorrectable ECC"). The restart
//     policy then decides the task's restart as for any failure.

// failOnLogSaid and noRestartSaid introduce, in a failure line, the
// program's own line that ended it (WithStderr does not repeat it).
const (
	failOnLogSaid = "wrote a line matching --fail-on-log: "
	noRestartSaid = "it asked not to be restarted: "
)

// logRuleMatched ends live t, whose launcher ended its program for the
// line e.LogLine matching e.LogRule.
func (m *Machine) logRuleMatched(t *TaskStatus, e ContainerCompleted) {
	line := firstLine(e.LogLine)
	switch e.LogRule {
	case FailOnLog:
		why := failOnLogSaid + line
		m.end(t, e.ExitStatus, e.Diagnostics, why)
		m.finish(Failed, t.Task.String()+where(t.Container)+" "+why)
	default:
		host := hostOf(t.Container.NodeID)
		m.end(t, e.ExitStatus, e.Diagnostics, "wrote a line matching --exclude-node-on-log: "+line)
		if host != "" {
			m.exclude(host, fmt.Sprintf("%s wrote a line matching --exclude-node-on-log: %s", t.Task, line))
		}
	}
}
