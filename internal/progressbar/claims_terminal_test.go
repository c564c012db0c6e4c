package progressbar

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestClaimsBarOnATerminal: README "Uploads show a progress bar on a
// terminal, nothing on a pipe" (the pipe half: TestNothingOnAPipe). New,
// given a real terminal (a pseudo-terminal's follower side), draws.
func TestClaimsBarOnATerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	defer ptmx.Close()
	require.NoError(t, unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	defer tty.Close()

	b := New(tty, "uploading env.tar.gz")
	b.Update(50, 100)
	b.Done()

	var got strings.Builder
	buf := make([]byte, 4096)
	require.NoError(t, ptmx.SetReadDeadline(time.Now().Add(5*time.Second)))
	for !strings.Contains(got.String(), "\n") {
		k, err := ptmx.Read(buf)
		require.NoError(t, err, "read so far: %q", got.String())
		got.Write(buf[:k])
	}
	require.Contains(t, got.String(), "uploading env.tar.gz")
	require.Contains(t, got.String(), "50%")
}
