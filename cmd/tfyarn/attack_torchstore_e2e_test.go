//go:build e2e

package main

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/torchstore"
)

// The attack on torch's rendezvous store (package torchstore), which worker:0's launcher serves
// on worker:0's port: another user on the node opens 300 connections, each announcing an 8 MiB
// value (24 bytes) and sending its first MiB. The launcher's memory grows by at most the store's
// budget of bytes in flight (before: 2.4 GiB of heap allocated for the announced lengths, of
// which the bytes sent made 300 MiB resident), the connections are closed once the request timeout has
// passed (before: never), the store is not served on another address of the node than its host's
// (before: every interface), and the job, whose torchrun agents keep their connections, ends
// well. On the plain cluster:
//
//	go test -tags e2e -run E2EAttackTorchStore ./cmd/tfyarn/
func TestE2EAttackTorchStore(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	python := frameworkPython(t, c, "pytorch")
	dir := clustertest.ContainerDir(t)
	script := filepath.Join(t.TempDir(), "hold.py")
	require.NoError(t, os.WriteFile(script, []byte(`import os, time
d = os.environ["TFYARN_FAULT_DIR"]
open(os.path.join(d, "started"), "w").close()
while not os.path.exists(os.path.join(d, "stop")):
    time.sleep(0.2)
`), 0o644))
	j := startFaultJobIn(t, c, bin, dir, "--framework", "pytorch", "--worker", "1c,1536m", "--python", python, script)
	j.waitRegistered(t, "worker:0")
	m := regexp.MustCompile(regexp.QuoteMeta(j.appID+" worker:0 registered at ") + `(\S+):(\d+)`).FindStringSubmatch(j.stderr())
	require.NotNil(t, m, j.stderr())
	host, port := m[1], m[2]
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(dir, "started")); return err == nil },
		3*time.Minute, 200*time.Millisecond, "the script never started: %s", j.stderr())
	pid := findLauncher(j.appID, "worker:0")
	require.NotZero(t, pid, "no launcher of worker:0")

	before := vmRSS(t, pid)
	attack := binary.LittleEndian.AppendUint32([]byte{byte(torchstore.CmdValidate)}, torchstore.ValidationMagic)
	attack = binary.LittleEndian.AppendUint64(append(attack, byte(torchstore.CmdSet)), 2)
	attack = binary.LittleEndian.AppendUint64(append(attack, "kk"...), torchstore.MaxValueLen)
	require.Len(t, attack, 24)
	start := time.Now()
	var conns []net.Conn
	part := make([]byte, 1<<20) // 1 MiB of each value, so that what is allocated is touched
	for range 300 {
		nc, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), 5*time.Second)
		require.NoError(t, err)
		defer nc.Close()
		_, err = nc.Write(attack)
		require.NoError(t, err)
		conns = append(conns, nc)
		go func() {
			_ = nc.SetWriteDeadline(time.Now().Add(20 * time.Second))
			_, _ = nc.Write(part)
		}()
	}
	time.Sleep(5 * time.Second)
	after := vmRSS(t, pid)
	t.Logf("worker:0's launcher: %d MiB of RSS before the attack, %d MiB under it", before>>20, after>>20)
	require.Less(t, after-before, int64(torchstore.MaxInFlightBytes+32<<20), "within the store's budget of bytes in flight")

	for i, nc := range conns {
		require.NoError(t, nc.SetReadDeadline(start.Add(torchstore.DefaultRequestTimeout+15*time.Second)))
		_, err := nc.Read(make([]byte, 1))
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "attack connection %d closed by the store: %v", i, err)
	}
	t.Logf("the attack's connections were closed %.1fs after they opened", time.Since(start).Seconds())

	addrs, err := net.LookupHost(host)
	require.NoError(t, err)
	if !slices.Contains(addrs, "127.0.0.1") {
		_, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), 5*time.Second)
		require.Error(t, err, "the store is served on 127.0.0.1 too, not only on its host %s (%v)", host, addrs)
		t.Logf("not served on 127.0.0.1, only on %s (%v)", host, addrs)
	}

	require.NoError(t, os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644))
	select {
	case <-j.exited:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the job did not end: %s", j.stderr())
	}
	r := runJSON(t, j.stdout.String())
	require.Equal(t, "SUCCEEDED", r.FinalStatus, j.stderr())
}

// vmRSS is pid's resident memory, in bytes.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
