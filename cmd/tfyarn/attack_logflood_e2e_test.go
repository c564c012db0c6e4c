//go:build e2e

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
)

// logFloodRequests is how many refused requests each listener gets.
const logFloodRequests = 2000

// logFloodBytesPer1000 bounds the log's growth per 1,000 refusals.
const logFloodBytesPer1000 = 16 << 10

// TestE2EAttackAMLogFlood (issue 33.1): anyone who can reach the AM's port
// sends it unsigned rendezvous requests with 8 KiB paths and status
// requests without the owner's key, and unsigned calls to a launcher's
// control port, 2,000 of each. Each refusal used to be logged whole
// (about 15 KiB a request into the NodeManager's log directory, then the
// owner's HDFS quota). Now the AM's and the launcher's stderr grow by less
// than 16 KiB per 1,000 refusals, and a summary line names the count.
//
//	go test -tags e2e -run '^TestE2EAttackAMLogFlood$' ./cmd/tfyarn/
func TestE2EAttackAMLogFlood(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	dir := clustertest.ContainerDir(t)
	release := filepath.Join(dir, "release")
	name := "e2e-attack-logflood-" + randomHex(t)
	run := startHeldRun(t, c, 5*time.Minute, release, bin, "run", "--name", name, "--am-attempts", "2", "--worker", "1c,256m", "--output", "json", "--",
		"sh", "-c", fmt.Sprintf(`touch %s/up; while [ ! -e %s ]; do sleep 0.2; done`, dir, release))
	appID := waitForRunning(t, c, bin, name)
	var saved *amattempt.State
	require.Eventually(t, func() bool {
		saved = savedState(t, c, appID)
		return saved != nil && len(saved.Tasks) == 1 && saved.Tasks[0].Control != 0
	}, 2*time.Minute, 200*time.Millisecond, "the AM never saved the task with its control port: %+v", saved)
	amPid, amLog := findAM(appID)
	require.NotZero(t, amPid, "no AM of %s", appID)
	launcher := findLauncher(appID, "worker:0")
	require.NotZero(t, launcher, "no launcher of worker:0")
	launcherLog, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(launcher), "fd", "2"))
	require.NoError(t, err)
	control := net.JoinHostPort(saved.Tasks[0].Host, strconv.Itoa(saved.Tasks[0].Control))
	amBefore, launcherBefore := fileSize(t, amLog), fileSize(t, launcherLog)

	long := rendezvous.PathPrefix + "spec/" + strings.Repeat("A", 8<<10)
	amStatuses := floodRefused(t, http.MethodGet, "http://"+saved.AM+long, logFloodRequests)
	webStatuses := floodRefused(t, http.MethodGet, "http://"+saved.AM+"/status", logFloodRequests)
	controlStatuses := floodRefused(t, http.MethodPost, "http://"+control+amattempt.AnnouncePath, logFloodRequests)
	t.Logf("answers: AM rendezvous %v, AM /status %v, control port %v", amStatuses, webStatuses, controlStatuses)
	time.Sleep(time.Second)
	amGrowth, launcherGrowth := fileSize(t, amLog)-amBefore, fileSize(t, launcherLog)-launcherBefore
	t.Logf("right after the flood: the AM's log grew %d bytes for %d refusals (%d per 1,000); the launcher's %d bytes for %d (%d per 1,000)",
		amGrowth, 2*logFloodRequests, amGrowth*1000/(2*logFloodRequests), launcherGrowth, logFloodRequests, launcherGrowth*1000/logFloodRequests)
	require.Equal(t, map[int]int{http.StatusUnauthorized: logFloodRequests}, amStatuses)
	require.Equal(t, map[int]int{http.StatusUnauthorized: logFloodRequests}, webStatuses)
	// The control port holds 8 connections, closing the oldest for a new one.
	require.Greater(t, controlStatuses[http.StatusUnauthorized], logFloodRequests*9/10, "control port answers")
	require.Less(t, amGrowth, int64(2*logFloodRequests/1000*logFloodBytesPer1000), "the AM's log growth")
	require.Less(t, launcherGrowth, int64(logFloodRequests/1000*logFloodBytesPer1000), "the launcher's log growth")

	// Within a minute each listener sums up what it counted.
	counted := func(path, what string) bool {
		data, _ := os.ReadFile(path)
		return regexp.MustCompile(regexp.QuoteMeta(what) + `: refused [0-9,]+ requests in the last [0-9]+ s: `).Match(data)
	}
	require.Eventually(t, func() bool {
		return counted(amLog, "rendezvous") && counted(amLog, "web UI") && counted(launcherLog, "control port "+control)
	}, 90*time.Second, time.Second, "no summary lines in the AM's log %s or the launcher's %s", amLog, launcherLog)
	amGrowth, launcherGrowth = fileSize(t, amLog)-amBefore, fileSize(t, launcherLog)-launcherBefore
	t.Logf("with the summary lines: the AM's log grew %d bytes (%d per 1,000 refusals), the launcher's %d (%d per 1,000)",
		amGrowth, amGrowth*1000/(2*logFloodRequests), launcherGrowth, launcherGrowth*1000/logFloodRequests)
	require.Less(t, amGrowth, int64(2*logFloodRequests/1000*logFloodBytesPer1000), "the AM's log growth")
	require.Less(t, launcherGrowth, int64(logFloodRequests/1000*logFloodBytesPer1000), "the launcher's log growth")

	require.NoError(t, run.finish(), "tfyarn run after the flood")
	require.Equal(t, "SUCCEEDED", runJSON(t, run.stdout.String()).FinalStatus)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Size()
}

// floodRefused sends n requests to url from 8 connections at a time, each
// its own connection, and counts the answers' statuses.
func floodRefused(t *testing.T, method, url string, n int) map[int]int {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	next := make(chan struct{})
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				status := -1
				req, err := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(`{"attempt":9,"am":"evil:1"}`))
				if err == nil {
					var resp *http.Response
					if resp, err = client.Do(req); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						status = resp.StatusCode
					}
				}
				mu.Lock()
				statuses[status]++
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	return statuses
}
