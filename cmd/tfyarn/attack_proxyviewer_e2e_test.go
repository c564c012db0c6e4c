//go:build e2e

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/reqsign"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// TestE2EAttackProxyViewer: through the ResourceManager's web proxy, which
// the test cluster runs as YARN does by default (no application ACLs, the
// RM's simple HTTP authentication), bob gets the job's public view only:
// no command line, no task address, no container id, neither as the
// anonymous viewer nor as a viewer the proxy names bob (?user.name=bob).
// The proxy names its viewer in its proxy-user cookie, which it sets
// itself; the viewer it names alice gets her job's details.
func TestE2EAttackProxyViewer(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	release := filepath.Join(clustertest.ContainerDir(t), "release")
	marker := "alice-private-" + randomHex(t)
	name := "e2e-attack-proxy-" + randomHex(t)
	run := startHeldRun(t, c, 3*time.Minute, release, bin, "run", "--name", name, "--worker", "1c,256m", "--output", "json", "--",
		"sh", "-c", fmt.Sprintf(`while [ ! -e %s ]; do sleep 0.2; done`, release), marker)
	appID := waitForRunning(t, c, bin, name)

	// alice's own status: her command line, the task's address.
	var v statusView
	deadline := time.Now().Add(time.Minute)
	for {
		out, errOut, code := execTfyarn(t, c, bin, nil, "status", appID, "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		v = statusView{}
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		if v.Live != nil && v.Live.Counts.Registered == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "alice's status shows her registered task within 1m: %s", out)
		time.Sleep(300 * time.Millisecond)
	}
	require.Contains(t, v.Live.Job.Command, marker)
	task := v.Live.Tasks[0]
	// The task's host names its node too; JSON has the port apart.
	secrets := []string{marker, task.Host, task.ContainerID}
	tracking := statusJSONWith(t, c, bin, appID).TrackingURL
	require.Regexp(t, `^http://[^/]+/proxy/`+appID+`/$`, tracking)
	owner := v.Live.User
	require.NotEmpty(t, owner)

	for _, path := range []string{"", "?user.name=bob", "status", "status?user.name=bob", "status?user.name=dr.who"} {
		code, body := proxyGet(t, tracking+path)
		t.Logf("bob: GET %s%s: %d %.300q", tracking, path, code, body)
		require.Equal(t, http.StatusOK, code, "the public view answers: %s", body)
		require.Contains(t, body, appID)
		for _, s := range secrets {
			require.NotContains(t, body, s, "bob through the proxy at %s", path)
		}
		if strings.HasPrefix(path, "status") {
			var rep contract.StatusReport
			require.NoError(t, json.Unmarshal([]byte(body), &rep), body)
			require.Len(t, rep.Tasks, 1)
			require.Equal(t, "running", rep.Tasks[0].State)
			require.Empty(t, rep.Tasks[0].Host)
			require.Empty(t, rep.Diagnostics)
		}
	}

	// The viewer the proxy names alice: the RM's simple HTTP authentication
	// takes her word (?user.name=), as it would take bob's claiming to be
	// her: docs/security.md says so.
	code, body := proxyGet(t, tracking+"status?user.name="+owner)
	require.Equal(t, http.StatusOK, code, body)
	for _, s := range secrets {
		require.Contains(t, body, s, "the owner's view through the proxy")
	}

	t.Run("bob replays alice's captured status request", func(t *testing.T) {
		replayStatusRequest(t, c, owner, appID, secrets)
	})

	require.NoError(t, run.finish())
	require.Equal(t, "SUCCEEDED", runJSON(t, run.stdout.String()).FinalStatus)
	_ = os.Remove(release)
}

// replayStatusRequest signs one status request as alice's client does
// (with her status key, read from her staging directory as the cluster's
// superuser) and captures its bytes; the AM answers it once, signed, with
// her report. Sent again verbatim, as bob would from a capture of the
// plain-HTTP wire, it is refused, as is one signed 6 minutes ago.
func replayStatusRequest(t *testing.T, c *clustertest.Cluster, owner, appID string, secrets []string) {
	key := []byte(c.Hadoop(t, "hdfs", "dfs", "-cat", hdfs.StagingDir(owner, appID)+"/"+contract.StatusKeyName))
	require.NoError(t, contract.CheckStatusKey(key))
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	rm, err := yarn.NewApplicationClient(conf, yarn.ClientOptions{User: owner})
	require.NoError(t, err)
	defer rm.Close()
	id, err := yarn.ParseApplicationID(appID)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := rm.GetApplicationReport(ctx, id)
	require.NoError(t, err)
	am := net.JoinHostPort(r.GetHost(), strconv.Itoa(int(r.GetRpcPort())))
	capture := func(at time.Time) ([]byte, string) {
		req, err := http.NewRequest(http.MethodGet, "http://"+am+contract.StatusPath, nil)
		require.NoError(t, err)
		signed, err := reqsign.NewRequest(contract.StatusRequestPurpose, http.MethodGet, contract.StatusPath, appID, at)
		require.NoError(t, err)
		sig := signed.Sign(contract.StatusSigningKey(key), nil, req.Header)
		raw, err := httputil.DumpRequestOut(req, false)
		require.NoError(t, err)
		return raw, sig
	}
	send := func(raw []byte) (*http.Response, []byte) {
		conn, err := net.DialTimeout("tcp", am, 10*time.Second)
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
		_, err = conn.Write(raw)
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		require.NoError(t, err)
		return resp, body
	}

	raw, sig := capture(time.Now())
	resp, body := send(raw)
	require.Equal(t, http.StatusOK, resp.StatusCode, "alice's request: %s", body)
	require.NoError(t, reqsign.CheckResponse(contract.StatusSigningKey(key), contract.StatusAnswerPurpose, sig, resp.StatusCode, resp.Header, body),
		"the AM signs its answer over alice's request")
	for _, s := range secrets {
		require.Contains(t, string(body), s)
	}

	resp, body = send(raw)
	t.Logf("bob's replay: %s %q", resp.Status, body)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the replay was answered: %s", body)
	require.Contains(t, string(body), "replayed request")
	stale, _ := capture(time.Now().Add(-6 * time.Minute))
	resp, body = send(stale)
	t.Logf("a stale request: %s %q", resp.Status, body)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the stale request was answered: %s", body)
	for _, s := range secrets {
		require.NotContains(t, string(body), s)
	}
}

// proxyGet GETs url as a browser would (following redirects) within 30 s.
func proxyGet(t *testing.T, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}
