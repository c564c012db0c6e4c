package taskspec

import (
	"regexp"
	"strings"
)

// maxExcludedNodes bounds --exclude-nodes: a blacklist is sent whole to
// each new ApplicationMaster attempt's ResourceManager.
const maxExcludedNodes = 1000

// maxLogRuleLen bounds --fail-on-log and --exclude-node-on-log.
const maxLogRuleLen = 1000

// maxOOMGrow bounds --oom-grow: a larger factor is a typo.
const maxOOMGrow = 16

// hostName is a node's host as YARN names it: letters, digits, '-', '_'
// and '.', never YARN's "*" (any node) nor a rack's "/...".
var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,252}[A-Za-z0-9])?$`)

// validateNodes checks --exclude-nodes, --max-node-failures and
// --oom-grow.
func (j Job) validateNodes() error {
	if j.MaxNodeFailures < NoNodeExclusion {
		return invalid("", "--max-node-failures %d is negative; give 0 (never exclude a node) or more", j.MaxNodeFailures)
	}
	if j.OOMGrow != 0 && !(j.OOMGrow > 1 && j.OOMGrow <= maxOOMGrow) {
		return invalid("", "--oom-grow %g: give a factor above 1 and at most %d, e.g. 2", j.OOMGrow, maxOOMGrow)
	}
	for flag, expr := range map[string]string{"--fail-on-log": j.FailOnLog, "--exclude-node-on-log": j.ExcludeNodeOnLog} {
		if len(expr) > maxLogRuleLen {
			return invalid("", "%s is %d bytes; give at most %d", flag, len(expr), maxLogRuleLen)
		}
		if _, err := regexp.Compile(expr); err != nil {
			return invalid("", "%s %q: %v; give an RE2 expression, e.g. 'Xid 79|uncorrectable ECC'", flag, expr, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
	}
	if g := j.GPUIdle; g.Timeout < 0 || g.Threshold < 0 || g.Threshold > 100 {
		return invalid("", "--gpu-idle-timeout %s, --gpu-idle-threshold %g: give a duration of 0 (never) or more and a percentage from 0 to 100", g.Timeout, g.Threshold)
	}
	if len(j.ExcludeNodes) > maxExcludedNodes {
		return invalid("", "--exclude-nodes names %d nodes; give at most %d", len(j.ExcludeNodes), maxExcludedNodes)
	}
	for _, h := range j.ExcludeNodes {
		if !hostName.MatchString(h) {
			return invalid("", "--exclude-nodes: %q is not a node's host name; give host names as YARN lists them (yarn node -list), comma-separated", h)
		}
	}
	return nil
}
