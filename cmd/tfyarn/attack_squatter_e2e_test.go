//go:build e2e

package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestE2EAttackAMPortSquatter (issue 33.3): a local user on the node of a dead AM attempt binds
// its old port (any user can: it is above 1024) and answers every launcher's call with an
// unsigned 401. The launchers used to take that for a final answer and stop looking, so they
// never heard attempt 2 on their control ports. Now an answer that does not verify is no
// answer: with --am-attempts 2 and the AM killed, both launchers leave the squatter for attempt
// 2, register there again, and the job SUCCEEDS with each program run once. (The test process
// is the squatter: binding the port needs no privilege on the node.)
//
//	go test -tags e2e -run '^TestE2EAttackAMPortSquatter$' ./cmd/tfyarn/
func TestE2EAttackAMPortSquatter(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	var answered atomic.Int32
	fc := amKilledWithPortHeldBy(nil, func(conn net.Conn) {
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		req, err := http.ReadRequest(bufio.NewReader(conn))
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
		answered.Add(1)
		body := `{"code":"unauthorized","error":"bad signature (wrong key, or the request was altered)"}`
		_, _ = io.WriteString(conn, "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "+
			strconv.Itoa(len(body))+"\r\n\r\n"+body)
	})
	j := startFaultJob(t, c, bin, fc.args...)
	fault := fc.inject(t, c, j)
	r := fc.check(t, c, j, fault)
	require.NotZero(t, answered.Load(), "no launcher asked the squatter: the attack did not happen")
	// A call that timed out against the squatter says why (best-effort metrics have short deadlines).
	if strings.Contains(j.stderr(), "did not verify") {
		require.Contains(t, j.stderr(), "a stranger holds the AM's port")
	}
	t.Logf("the squatter answered %d calls with an unsigned 401; %s", answered.Load(), strings.TrimSpace(r.Outcome))
}
