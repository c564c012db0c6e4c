package executor

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The AM dies while the program runs and the next attempt, which adopted
// the task, comes up elsewhere: the launcher finds it through the locator,
// registers there again, says so on stderr, and obeys its stop order and
// reports the exit to it.
func TestLauncherFollowsTheAMToItsNewAttempt(t *testing.T) {
	first := startAM(t, group(taskspec.Worker, 1))
	l := first.newLaunch(id(taskspec.Worker, 0), "sleep", "60")
	var where atomic.Value
	where.Store(first.addr)
	l.cfg.Locate = func(context.Context) (string, error) { return where.Load().(string), nil }
	l.cfg.LocateWhere = "/staging/am-tasks.json"
	l.cfg.AMLostAfter = 100 * time.Millisecond
	done := l.start(t)
	waitFor(t, l.stderr, "TF_CONFIG=")
	regs := first.board.Registrations()
	require.Len(t, regs, 1)

	second, _ := startAMWith(t, first.secret, group(taskspec.Worker, 1))
	adopted := regs[0]
	adopted.PID = 0
	second.board.Adopt(adopted)
	// The first attempt dies; the file names the second a moment later.
	first.stop()
	time.Sleep(300 * time.Millisecond)
	where.Store(second.addr)

	waitFor(t, l.stderr, "the AM moved to "+second.addr+" (found in /staging/am-tasks.json): registered there again")
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

// No new attempt ever appears: the launcher gives up looking after
// AMLostTimeout, saying on stderr what it waited for and where it looked,
// and the program runs on undisturbed.
func TestLauncherGivesUpLookingForTheAM(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", "sleep 2; echo finished")
	l.cfg.Locate = func(context.Context) (string, error) {
		return "", errors.New("open /staging/am-tasks.json: file does not exist")
	}
	l.cfg.LocateWhere = "/staging/am-tasks.json"
	l.cfg.AMLostAfter = 100 * time.Millisecond
	l.cfg.AMLostTimeout = 500 * time.Millisecond
	done := l.start(t)
	waitFor(t, l.stderr, "TF_CONFIG=")
	a.stop()
	waitFor(t, l.stderr, "no longer listening for the AM's stop order: rendezvous: waiting for a stop order as worker:0: lost the AM: the AM at "+a.addr+" has not answered for 500ms and /staging/am-tasks.json named no other AM")
	o := wait(t, done, l)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code)
	require.Contains(t, l.stdout.String(), "finished")
}

func TestDecodeSavedAM(t *testing.T) {
	addr, err := decodeSavedAM("/s/am-tasks.json", []byte(`{"am":"node2:4321","tasks":[{"task":"worker:0"}]}`))
	require.NoError(t, err)
	require.Equal(t, "node2:4321", addr)
	_, err = decodeSavedAM("/s/am-tasks.json", []byte(`{"tasks":[]}`))
	require.EqualError(t, err, "reading /s/am-tasks.json: no AM address in it")
	_, err = decodeSavedAM("/s/am-tasks.json", []byte(`{"am":`))
	require.ErrorContains(t, err, "reading /s/am-tasks.json: unexpected end of JSON input")
}

// The README's bounds: looked for after 10 s without an answer, given up
// after 15 minutes; on a Kerberized cluster the tokens alone cannot read
// the file, and the lookup says so.
func TestLocatorDefaultsAndKerberos(t *testing.T) {
	cfg := Config{Command: []string{"true"}, Task: id(taskspec.Worker, 0), AMAddress: "am:1", Host: "h"}
	require.NoError(t, cfg.setDefaults())
	require.Equal(t, 10*time.Second, cfg.AMLostAfter)
	require.Equal(t, 15*time.Minute, cfg.AMLostTimeout)

	locate := hdfsLocator(contract.AMLocator{Path: "/s/am-tasks.json", User: "u", Conf: map[string]string{
		"fs.defaultFS": "hdfs://nn:8020", "hadoop.security.authentication": "kerberos"}}, nil)
	_, err := locate(context.Background())
	require.ErrorIs(t, err, hdfs.ErrTokenOnly)
	require.ErrorContains(t, err, "reading /s/am-tasks.json: hdfs: this operation needs a Kerberos login")
}
