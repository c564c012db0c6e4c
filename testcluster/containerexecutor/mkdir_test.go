package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Two containers of one application starting on a node at once: one run of the helper makes the
// application's directory (root's until its chown), the other finds it in between. The second
// waits for the chown instead of refusing the directory as another user's (seen in make test:
// "logs/application_... exists and does not belong to alice"). A directory that stays root's is
// still refused.
func TestMkdirOwnedWaitsForAnotherRunsChown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (the helper runs as root): run make test as root")
	}
	defer func(w time.Duration) { inProgressWait = w }(inProgressWait)
	inProgressWait = time.Second
	user := &account{Name: "nobody-test", UID: 65534, GID: 65534}
	parent := t.TempDir()

	inProgress := filepath.Join(parent, "application_1")
	require.NoError(t, unix.Mkdir(inProgress, 0o700)) // the other run's mkdir, as root
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = unix.Lchown(inProgress, user.UID, user.GID) // and its chown
	}()
	require.NoError(t, mkdirOwned(inProgress, user, user.GID, 0o750))

	stuck := filepath.Join(parent, "application_2")
	require.NoError(t, unix.Mkdir(stuck, 0o700))
	start := time.Now()
	err := mkdirOwned(stuck, user, user.GID, 0o750)
	require.ErrorContains(t, err, "exists and does not belong to nobody-test")
	require.GreaterOrEqual(t, time.Since(start), inProgressWait)
}
