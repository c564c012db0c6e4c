package executor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
)

// The first stderr line that matches a rule is kept, whole lines only,
// capped like the tail's; --fail-on-log wins a line both match.
func TestLogRules(t *testing.T) {
	r, err := newLogRules(`loss is NaN`, `Xid (79|48)|uncorrectable ECC`)
	require.NoError(t, err)
	tail := newTailBuffer(10, 32)
	tail.onLine = r.check
	select {
	case <-r.matched():
		t.Fatal("matched before any line")
	default:
	}
	_, _ = tail.Write([]byte("step 1\nNVRM: Xi"))
	require.Equal(t, "", first(r), "a line is matched once it is whole")
	_, _ = tail.Write([]byte("d 79, GPU has fallen off the bus\nloss is NaN\n"))
	<-r.matched()
	rule, line := r.match()
	require.Equal(t, rendezvous.LogRuleExcludeNode, rule)
	require.Equal(t, "NVRM: Xid 79, GPU has fallen off", line, "capped at the tail's line length")

	both, err := newLogRules(`Xid`, `Xid`)
	require.NoError(t, err)
	both.check("Xid 79")
	rule, _ = both.match()
	require.Equal(t, rendezvous.LogRuleFail, rule)

	none, err := newLogRules("", "")
	require.NoError(t, err)
	require.Nil(t, none)
	none.check("anything")
	require.Nil(t, none.matched())

	doc := strings.Join(strings.Fields(clustertest.DocSection(t, "## Lines that name a fault")), " ")
	require.Contains(t, doc, fmt.Sprintf("matched up to its first %d bytes", rendezvous.MaxStderrLineLen), "the launcher's tail caps lines at rendezvous.MaxStderrLineLen (run.go)")
	require.Contains(t, doc, "A line that matches both is `--fail-on-log`'s.")

	_, err = newLogRules(`(a`, "")
	require.ErrorContains(t, err, "--fail-on-log: error parsing regexp")
	_, err = newLogRules("", `a{2000}`)
	require.True(t, err != nil && strings.Contains(err.Error(), "--exclude-node-on-log"), "%v", err)
}

func first(r *logRules) string {
	rule, _ := r.match()
	return rule
}
