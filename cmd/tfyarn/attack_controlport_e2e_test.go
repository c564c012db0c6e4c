//go:build e2e

package main

import (
	"context"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
)

// The attack on a launcher's control port (package amattempt): another user on the node reads
// the port from the launcher's registration or a port scan and tells the launcher that a "new
// attempt" runs at an address it controls. Unsigned, signed with a key of its own, or aimed at
// another container, every such call is refused (401) and logged on the launcher's stderr
// without any key; then the real AM is killed, attempt 2 calls the launchers, and they follow
// it, never the attacker's address (whose listener counts every connection). On the plain
// cluster:
//
//	go test -tags e2e -run E2EAttackLauncherControlPort ./cmd/tfyarn/
func TestE2EAttackLauncherControlPort(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	trap, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer trap.Close()
	var trapped atomic.Int32
	go func() {
		for {
			conn, err := trap.Accept()
			if err != nil {
				return
			}
			trapped.Add(1)
			conn.Close()
		}
	}()

	fc := amKilledWithAttempts()
	j := startFaultJob(t, c, bin, fc.args...)
	j.waitRegistered(t, "worker:1")
	var saved *amattempt.State
	require.Eventually(t, func() bool {
		saved = savedState(t, c, j.appID)
		return saved != nil && len(saved.Tasks) == 2
	}, time.Minute, 200*time.Millisecond, "the AM never saved both tasks: %+v", saved)

	strangersKey, err := rendezvous.NewSecret()
	require.NoError(t, err)
	for _, task := range saved.Tasks {
		require.NotZero(t, task.Control, "%s's control port is saved", task.Task)
		url := "http://" + net.JoinHostPort(task.Host, strconv.Itoa(task.Control)) + amattempt.AnnouncePath
		forge := func(key []byte, container string) *http.Request {
			req, err := amattempt.NewAnnouncementRequest(context.Background(), url, key,
				amattempt.Announcement{ContainerID: container, Attempt: 9, AM: trap.Addr().String()}, time.Now())
			require.NoError(t, err)
			return req
		}
		unsigned := func() *http.Request {
			req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"attempt":9,"am":"`+trap.Addr().String()+`"}`))
			require.NoError(t, err)
			return req
		}
		zeroSignature := func() *http.Request {
			req := forge(strangersKey, task.ContainerID)
			req.Header.Set("X-Tfyarn-Signature", strings.Repeat("0", 64))
			return req
		}
		other := saved.Tasks[0].ContainerID
		if other == task.ContainerID {
			other = saved.Tasks[1].ContainerID
		}
		for _, attack := range []struct {
			name string
			req  *http.Request
		}{
			{"unsigned", unsigned()},
			{"a zero signature", zeroSignature()},
			{"the stranger's own key", forge(rendezvous.ContainerKey(strangersKey, task.ContainerID), task.ContainerID)},
			{"signed for this container with a key of its own", forge(strangersKey, task.ContainerID)},
			{"the other task's container, with a key of its own", forge(rendezvous.ContainerKey(strangersKey, other), other)},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			resp, err := http.DefaultClient.Do(attack.req.WithContext(ctx))
			require.NoError(t, err, "%s: %s", task.Task, attack.name)
			resp.Body.Close()
			cancel()
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s: %s", task.Task, attack.name)
		}
		// The launcher said so on its stderr, with no key.
		pid := findLauncher(j.appID, task.Task)
		require.NotZero(t, pid, "no launcher of %s", task.Task)
		stderrPath, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", "2"))
		require.NoError(t, err)
		log, err := os.ReadFile(stderrPath)
		require.NoError(t, err)
		require.Contains(t, string(log), "control port "+net.JoinHostPort(task.Host, strconv.Itoa(task.Control))+": refused POST "+amattempt.AnnouncePath)
		require.Contains(t, string(log), "bad signature (wrong key, or the request was altered)")
		require.NotContains(t, string(log), hex.EncodeToString(strangersKey))
	}

	// The real AM dies: attempt 2 calls both launchers, which follow it, not the trap.
	fault := fc.inject(t, c, j)
	r := fc.check(t, c, j, fault)
	require.Zero(t, trapped.Load(), "a launcher went to the stranger's address")
	t.Logf("%s after the strangers' calls: %s", fc.name, r.Outcome)
}
