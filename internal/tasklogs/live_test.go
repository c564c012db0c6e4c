package tasklogs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/tasklogs/nodemanager"
)

// A NodeManager answers "Unknown container" for a container it has not
// started yet (run asks as soon as the AM reports the container), and the
// same once it forgot one that ended: only the second ends the follower.
func TestFollowerWaitsForAContainerTheNodeManagerDoesNotKnowYet(t *testing.T) {
	var mu sync.Mutex
	state := "unknown" // then "running" with content, then "unknown" again
	content := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if state == "unknown" {
			http.Error(w, "java.lang.Exception: Unknown container. Container either has not started or has already completed or doesn't belong to this node at all.", http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, "Container: c on n\nLogAggregationType: LOCAL\n===\nLogType:stdout\nLogLastModifiedTime:x\nLogLength:%d\nLogContents:\n%s\nEnd of LogType:stdout\n", len(content), content)
	}))
	defer srv.Close()
	var out bytes.Buffer
	nm := nodemanager.New("alice")
	set := newFollowSet(nm, []string{"stdout"}, 0, func(task, file string) io.Writer { return &out }, nil)
	set.add(taskContainer{task: "chief:0", container: "c", node: "n:1"}, strings.TrimPrefix(srv.URL, "http://"))
	ctx := context.Background()
	set.poll(ctx)
	require.False(t, set.list()[0].done, "not started yet is not the end")
	mu.Lock()
	state, content = "running", "hello\n"
	mu.Unlock()
	set.poll(ctx)
	require.Equal(t, "hello\n", out.String())
	mu.Lock()
	state = "unknown"
	mu.Unlock()
	set.poll(ctx)
	require.True(t, set.list()[0].done, "forgotten after it was known: the end")
}

// A container whose NodeManager never served it (the test cluster's first
// NodeManager, see the logs e2e test) ends with one note, not silence.
func TestFollowerSaysWhenItNeverSawTheContainer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "java.lang.Exception: Unknown container. Container either has not started or has already completed or doesn't belong to this node at all.", http.StatusNotFound)
	}))
	defer srv.Close()
	var notes []string
	set := newFollowSet(nodemanager.New("alice"), []string{"stdout", "stderr"}, 0, func(task, file string) io.Writer { return io.Discard }, func(s string) { notes = append(notes, s) })
	set.add(taskContainer{task: "worker:0", container: "c9", node: "n:1"}, strings.TrimPrefix(srv.URL, "http://"))
	set.poll(context.Background())
	require.Empty(t, notes, "not yet: it may not have started")
	set.finish(context.Background(), "c9")
	require.Len(t, notes, 1)
	require.Equal(t, "cannot show worker:0's output: the NodeManager of c9 never served its logs", notes[0])
}

// A NodeManager that answered with a reason (secure mode without Hadoop's native library) gets
// that reason, once per file, and no second note saying it never served the container.
func TestFollowerGivesTheNodeManagersReasonOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"RemoteException":{"exception":"NoClassDefFoundError","message":"Could not initialize class org.apache.hadoop.io.SecureIOUtils"}}`, http.StatusInternalServerError)
	}))
	defer srv.Close()
	var notes []string
	set := newFollowSet(nodemanager.New("alice"), []string{"stdout"}, 0, func(task, file string) io.Writer { return io.Discard }, func(s string) { notes = append(notes, s) })
	set.add(taskContainer{task: "worker:0", container: "c9", node: "n:1"}, strings.TrimPrefix(srv.URL, "http://"))
	set.poll(context.Background())
	set.poll(context.Background())
	set.finish(context.Background(), "c9")
	require.Len(t, notes, 1, "%q", notes)
	require.Contains(t, notes[0], "cannot read worker:0's stdout (c9) from its NodeManager")
	require.Contains(t, notes[0], "without Hadoop's native library")
}
