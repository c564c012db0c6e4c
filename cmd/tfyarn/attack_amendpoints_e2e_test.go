//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
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
	"github.com/tfyarn/tfyarn/internal/reqsign"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/jobreport"
)

// TestE2EAttackAMEndpoints: while alice's job runs, bob (another
// HADOOP_USER_NAME, and a raw HTTP client on the AM's port, which the
// ResourceManager's report of alice's application names) gets neither the
// status JSON nor the command line nor any task's address from the AM;
// alice's `tfyarn status` still shows her live task table, and her page's
// report through the RM's proxy answers. (The page itself in a browser is
// TestE2EWebUIHistoryGPU's; the Kerberos cluster's bob with his own ticket
// is TestE2EAttackKerberosAMEndpoints's.)
func TestE2EAttackAMEndpoints(t *testing.T) {
	c := clustertest.Require(t)
	bob := c.User(t, "tfyarn-bob-"+randomHex(t))
	attackAMEndpoints(t, c, []string{"HADOOP_USER_NAME=" + bob}, func(conf *hadoopconf.Config) *yarn.ApplicationClient {
		rm, err := yarn.NewApplicationClient(conf, yarn.ClientOptions{User: bob})
		require.NoError(t, err)
		return rm
	})
}

// attackAMEndpoints runs alice's held job on c and attacks its AM as bob:
// asBob is what makes tfyarn run as bob, bobRM his ResourceManager client.
func attackAMEndpoints(t *testing.T, c *clustertest.Cluster, asBob []string, bobRM func(*hadoopconf.Config) *yarn.ApplicationClient) {
	bin := clustertest.BuildTfyarn(t)
	release := filepath.Join(clustertest.ContainerDir(t), "release")
	marker := "alice-private-" + randomHex(t)
	name := "e2e-attack-am-" + randomHex(t)
	run := startHeldRun(t, c, 3*time.Minute, release, bin, "run", "--name", name, "--worker", "1c,256m", "--output", "json", "--",
		"sh", "-c", fmt.Sprintf(`while [ ! -e %s ]; do sleep 0.2; done`, release), marker)
	appID := waitForRunning(t, c, bin, name)

	// alice's status: the live table, her command line, the task's address.
	var live jobreport.Report
	deadline := time.Now().Add(time.Minute)
	for {
		out, errOut, code := execTfyarn(t, c, bin, nil, "status", appID, "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		var v statusView
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		if v.Live != nil && v.Live.Counts.Registered == 1 {
			live = *v.Live
			break
		}
		require.True(t, time.Now().Before(deadline), "alice's status shows her registered task within 1m: %s", out)
		time.Sleep(300 * time.Millisecond)
	}
	require.Contains(t, live.Job.Command, marker)
	// The web UI's report through the RM's proxy, as the page's script reads it.
	proxied := proxyStatus(t, statusJSONWith(t, c, bin, appID).TrackingURL+strings.TrimPrefix(contract.StatusPath, "/"))
	require.Equal(t, appID, proxied.AppID)
	taskAddr := net.JoinHostPort(live.Tasks[0].Host, strconv.Itoa(live.Tasks[0].Port))
	secrets := []string{marker, taskAddr, live.Tasks[0].ContainerID}

	t.Run("bob reading the token files on the AM's node", func(t *testing.T) {
		// On a NodeManager whose containers all run as one account, bob's
		// container could read alice's containers' token files: the status
		// key is in neither the AM's (it keeps the key in memory) nor a
		// task's (never given one).
		amTokens, err := security.ReadCredentialsFile(filepath.Join("/proc", strconv.Itoa(amPID(t, appID)), "cwd", "container_tokens"))
		require.NoError(t, err)
		_, ok := amTokens.Secret(contract.StatusKeyAlias)
		require.False(t, ok, "the AM's token file holds the status key")
		worker, err := security.ReadCredentialsFile(findFile(t, c.Dir, live.Tasks[0].ContainerID+".tokens"))
		require.NoError(t, err)
		_, ok = worker.Secret(contract.StatusKeyAlias)
		require.False(t, ok, "the task's token file holds the status key")
	})

	t.Run("bob's tfyarn status", func(t *testing.T) {
		out, errOut, code := execTfyarn(t, c, bin, asBob, "status", appID, "--output", "json")
		require.Equal(t, exitOK, code, "the RM's report is bob's to read: %s", errOut)
		var v statusView
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		require.Nil(t, v.Live, "bob got alice's live task table: %s", out)
		text, errText, _ := execTfyarn(t, c, bin, asBob, "status", appID)
		for _, s := range secrets {
			require.NotContains(t, out+errOut+text+errText, s)
		}
	})

	t.Run("bob's raw HTTP client on the AM's port", func(t *testing.T) {
		conf, err := hadoopconf.LoadDir(c.ConfDir)
		require.NoError(t, err)
		rm := bobRM(conf)
		defer rm.Close()
		id, err := yarn.ParseApplicationID(appID)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		r, err := rm.GetApplicationReport(ctx, id)
		require.NoError(t, err)
		am := net.JoinHostPort(r.GetHost(), strconv.Itoa(int(r.GetRpcPort())))
		hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		guess := contract.StatusSigningKey([]byte("bob's guess at alice's status key"))
		for _, tc := range []struct {
			method, path string
			forged       bool // signed with bob's guess at the key
		}{
			{"GET", contract.StatusPath, false},
			{"GET", contract.StatusPath, true},
			{"HEAD", contract.StatusPath, false},
			{"GET", "/", false},
			{"GET", "/index.html", false},
			{"GET", "/static/page.js", false},
			{"GET", contract.ProxiedPrefix, false},
			{"GET", contract.ProxiedPrefix + contract.WebPathToken([]byte("bob's guess at alice's status key")) + "/status", false},
			{"GET", "/rendezvous/v1/spec?task=worker:0", false},
			{"POST", "/", false},
		} {
			req, err := http.NewRequestWithContext(ctx, tc.method, "http://"+am+tc.path, nil)
			require.NoError(t, err)
			if tc.forged {
				r, err := reqsign.NewRequest(contract.StatusRequestPurpose, tc.method, tc.path, appID, time.Now())
				require.NoError(t, err)
				r.Sign(guess, nil, req.Header)
			}
			resp, err := hc.Do(req)
			require.NoError(t, err, "%s %s", tc.method, tc.path)
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			t.Logf("%s %s: %s %q", tc.method, tc.path, resp.Status, body)
			require.NotEqual(t, http.StatusOK, resp.StatusCode, "%s %s answered bob: %s", tc.method, tc.path, body)
			for _, s := range append(secrets, `"app_id"`, "<table") {
				require.NotContains(t, string(body), s, "%s %s", tc.method, tc.path)
			}
			if tc.method == "GET" && resp.StatusCode == http.StatusFound {
				require.Equal(t, "http://"+mustRMWeb(t, conf)+"/proxy/"+appID+"/", resp.Header.Get("Location"),
					"%s: strangers are sent to the RM's proxy", tc.path)
			}
		}
	})

	require.NoError(t, run.finish())
	require.Equal(t, "SUCCEEDED", runJSON(t, run.stdout.String()).FinalStatus)
	_ = os.Remove(release)
}

func mustRMWeb(t *testing.T, conf *hadoopconf.Config) string {
	t.Helper()
	a, err := conf.RMAddresses(hadoopconf.RMWebapp)
	require.NoError(t, err)
	return a[0]
}

// statusJSONWith is `tfyarn status APP_ID --output json` run as alice on c
// (statusJSON runs in this process, with its environment).
func statusJSONWith(t *testing.T, c *clustertest.Cluster, bin, appID string) appView {
	t.Helper()
	out, errOut, code := execTfyarn(t, c, bin, nil, "status", appID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var v appView
	require.NoError(t, json.Unmarshal([]byte(out), &v), "stdout: %q", out)
	return v
}
