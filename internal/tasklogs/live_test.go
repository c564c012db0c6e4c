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

// A secure NodeManager without Hadoop's native library cannot read any
// container's logs: one note for the whole run, counting the files and tasks
// it saw fail, not one per task and file; a task added later, polls and the
// tasks' ends say nothing more, and none of them is "never served".
func TestFollowerSaysNoNativeLibraryOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"RemoteException":{"exception":"NoClassDefFoundError","message":"Could not initialize class org.apache.hadoop.io.SecureIOUtils"}}`, http.StatusInternalServerError)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	var notes []string
	set := newFollowSet(nodemanager.New("alice"), nil, 0, func(task, file string) io.Writer { return io.Discard }, func(s string) { notes = append(notes, s) })
	for i := 0; i < 3; i++ {
		set.add(taskContainer{task: fmt.Sprintf("worker:%d", i), container: fmt.Sprintf("c%d", i), node: "n:1"}, addr)
	}
	ctx := context.Background()
	set.poll(ctx)
	require.Equal(t, []string{"cannot show the tasks' output live (6 files of 3 tasks so far: worker:0, worker:1, worker:2, and any later task's): " +
		"the NodeManager cannot read container logs in secure mode without Hadoop's native library; " +
		"their logs will be in the application's aggregated logs once it ends (tfyarn logs <application id>, on a cluster that aggregates logs)"}, notes)
	set.add(taskContainer{task: "worker:3", container: "c3", node: "n:1"}, addr)
	set.poll(ctx)
	set.poll(ctx)
	for i := 0; i < 4; i++ {
		set.finish(ctx, fmt.Sprintf("c%d", i))
	}
	require.Len(t, notes, 1, "%q", notes)
}

// A task that ended before the first poll is first read by finish, which
// says it too (once).
func TestFollowerSaysNoNativeLibraryAtATasksEnd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "javax.servlet.ServletException: javax.servlet.ServletException: java.lang.ExceptionInInitializerError", http.StatusInternalServerError)
	}))
	defer srv.Close()
	var notes []string
	set := newFollowSet(nodemanager.New("alice"), []string{"stdout"}, 0, func(task, file string) io.Writer { return io.Discard }, func(s string) { notes = append(notes, s) })
	set.add(taskContainer{task: "worker:0", container: "c9", node: "n:1"}, strings.TrimPrefix(srv.URL, "http://"))
	set.finish(context.Background(), "c9")
	set.finish(context.Background(), "c9")
	require.Len(t, notes, 1, "%q", notes)
	require.Contains(t, notes[0], "(1 file of 1 task so far: worker:0, and any later task's)")
}

// The note lists a few tasks, then counts the rest.
func TestNoNativeNoteListsAFewTasks(t *testing.T) {
	require.Contains(t, noNativeNote([]string{"worker:0", "worker:1", "worker:2", "worker:3", "worker:4", "worker:5"}, 12),
		"(12 files of 6 tasks so far: worker:0, worker:1, worker:2, worker:3 and 2 more, and any later task's)")
}

// A NodeManager that answered with another reason (SPNEGO wanted) gets that
// reason, once per file, and no second note saying it never served the
// container.
func TestFollowerGivesTheNodeManagersReasonOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Authentication required", http.StatusUnauthorized)
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
	require.Contains(t, notes[0], "SPNEGO")
}
