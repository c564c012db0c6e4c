package executor

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The AM dies while the program runs and the next attempt, which adopted
// the task, comes up elsewhere and names its address on the launcher's
// control port (announced at registration): the launcher moves there,
// registers again, says so on stderr, and obeys its stop order and
// reports the exit to it.
func TestLauncherFollowsTheAMToItsNewAttempt(t *testing.T) {
	first := startAM(t, group(taskspec.Worker, 1))
	l := first.newLaunch(id(taskspec.Worker, 0), "sleep", "60")
	l.cfg.AMAttempt = 1
	l.cfg.AMLostAfter = 100 * time.Millisecond
	done := l.start(t)
	waitFor(t, l.stderr, "TF_CONFIG=")
	regs := first.board.Registrations()
	require.Len(t, regs, 1)
	require.NotZero(t, regs[0].ControlPort, "the launcher announces its control port")

	second, _ := startAMWith(t, first.secret, group(taskspec.Worker, 1))
	adopted := regs[0]
	adopted.PID = 0
	second.board.Adopt(adopted)
	// The first attempt dies; the second calls the launcher a moment later.
	first.stop()
	time.Sleep(300 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, amattempt.Announce(ctx, first.secret, 2, second.addr, amattempt.Task{
		Task: adopted.Task.String(), ContainerID: adopted.ContainerID, Host: adopted.Host, Port: adopted.Port, Control: adopted.ControlPort}))

	where := "control port 127.0.0.1:" + strconv.Itoa(adopted.ControlPort)
	waitFor(t, l.stderr, "the AM moved to "+second.addr+" (found in "+where+"): registered there again")
	var again bool
	require.Eventually(t, func() bool {
		for _, e := range second.board.Drain() {
			if tr, ok := e.(rendezvous.TaskRegistered); ok && tr.Again && tr.Registration.Task == adopted.Task {
				again = true
			}
		}
		return again
	}, 5*time.Second, 10*time.Millisecond)

	second.board.Stop(adopted.Task, "the job is decided")
	o := wait(t, done, l)
	require.NoError(t, o.err)
	require.Equal(t, 128+15, o.code, l.stderr.String())
	rep, ok := second.board.Exit(adopted.Task)
	require.True(t, ok, "the exit is reported to the new attempt")
	require.True(t, rep.Stopped)
}

// No new attempt ever calls: the launcher gives up looking after
// AMLostTimeout, saying on stderr what it waited for and where it looked,
// and the program runs on undisturbed.
func TestLauncherGivesUpLookingForTheAM(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", "sleep 2; echo finished")
	l.cfg.AMAttempt = 1
	l.cfg.AMLostAfter = 100 * time.Millisecond
	l.cfg.AMLostTimeout = 500 * time.Millisecond
	done := l.start(t)
	waitFor(t, l.stderr, "TF_CONFIG=")
	where := "control port 127.0.0.1:" + strconv.Itoa(a.board.Registrations()[0].ControlPort)
	a.stop()
	waitFor(t, l.stderr, "no longer listening for the AM's stop order: rendezvous: waiting for a stop order as worker:0: lost the AM: the AM at "+a.addr+" has not answered for 500ms and "+where+" named no other AM")
	waitFor(t, l.stderr, "last lookup: no later ApplicationMaster attempt has called yet")
	o := wait(t, done, l)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code)
	require.Contains(t, l.stdout.String(), "finished")
}

// The README's bounds: looked for after 10 s without an answer, given up
// after 15 minutes.
func TestLocatorDefaults(t *testing.T) {
	cfg := Config{Command: []string{"true"}, Task: id(taskspec.Worker, 0), AMAddress: "am:1", Host: "h"}
	require.NoError(t, cfg.setDefaults())
	require.Equal(t, 10*time.Second, cfg.AMLostAfter)
	require.Equal(t, 15*time.Minute, cfg.AMLostTimeout)

}
