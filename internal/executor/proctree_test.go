package executor

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
)

const allocBytes = 80 << 20

// helperBusy is the test binary as a program's process: "alloc" holds
// allocBytes touched, "spin" keeps a core busy, "sleep" idles; each for at
// most 60 s (the test kills it sooner).
func helperBusy(mode string) int {
	end := time.Now().Add(60 * time.Second)
	switch mode {
	case "alloc":
		b := make([]byte, allocBytes)
		for i := range b {
			b[i] = byte(i)
		}
		fmt.Println("allocated")
		time.Sleep(time.Until(end))
		runtime.KeepAlive(b)
	case "spin":
		for x := 0; time.Now().Before(end); x++ {
			_ = x * x
		}
	default:
		time.Sleep(time.Until(end))
	}
	return 0
}

// startTree starts sh (marked, in its own group) with children of the
// given helper modes, as a launcher starts a program.
func startTree(t testing.TB, mark string, modes ...string) *exec.Cmd {
	t.Helper()
	script := ""
	for _, m := range modes {
		script += helperEnv + "=" + m + ` "$0" & `
	}
	cmd := exec.Command("sh", "-c", script+"wait", os.Args[0])
	cmd.Env = append(os.Environ(), EnvLaunchMark+"="+mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd
}

// A real tree: sh with a child holding 80 MiB and a child spinning. The
// sample counts all three processes (not an unmarked one beside them),
// their memory, about a core's CPU over the interval; when the
// memory's holder ends, RSS falls and the peak stays.
func TestTreeSamplerRealTree(t *testing.T) {
	mark := newLaunchMark()
	other := exec.Command(os.Args[0]) // unmarked, holding memory: not the program's
	other.Env = append(os.Environ(), helperEnv+"=alloc")
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })

	start := time.Now()
	prog := startTree(t, mark, "alloc", "spin")
	s := newTreeSampler(mark, prog.Process.Pid, start)

	var got, prev contract.ProcessSample
	var at, prevAt time.Time
	// On a loaded machine (a CI run beside other work, load 50 on 2 cores) a second may give the
	// spinner only a few percent of a core, so the test does not ask for a share of a core: it
	// samples until the spinner's CPU time shows (sh and the allocator use next to none), for up
	// to 30 s, and checks the percentage against the CPU time that interval added.
	deadline := time.Now().Add(30 * time.Second)
	for n := 1; ; n++ {
		time.Sleep(time.Second)
		prev, prevAt = got, at
		at = time.Now()
		got = s.sample(at)
		// The second sample at least: the first's interval has the start.
		if n >= 2 && got.RSSBytes >= allocBytes && got.Processes == 3 && got.CPUPercent > 0 && got.CPUSeconds > 0.3 || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("%+v", got)
	require.Equal(t, 3, got.Processes, "sh, alloc, spin; not the unmarked spinner")
	require.GreaterOrEqual(t, got.RSSBytes, int64(allocBytes))
	require.Less(t, got.RSSBytes, int64(2*allocBytes), "the unmarked holder and the test are not counted")
	require.GreaterOrEqual(t, got.PeakRSSBytes, got.RSSBytes)
	require.Greater(t, got.CPUSeconds, 0.3, "the spinner's CPU time counts")
	require.Greater(t, got.CPUPercent, 0.0, "one child spins")
	require.Less(t, got.CPUPercent, 150.0, "one spinner")
	require.InDelta(t, (got.CPUSeconds-prev.CPUSeconds)/at.Sub(prevAt).Seconds()*100, got.CPUPercent, 0.5,
		"the percentage is the CPU time the tree used over the interval since the last sample")

	// The holder ends: RSS falls by its 80 MiB, the peak stays.
	var holder int
	for _, pid := range descendants(os.Getpid(), mark, 0) {
		if env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil && containsVar(env, helperEnv+"=alloc") {
			holder = pid
		}
	}
	require.NotZero(t, holder)
	require.NoError(t, syscall.Kill(holder, syscall.SIGKILL))
	deadline = time.Now().Add(10 * time.Second)
	var after contract.ProcessSample
	for {
		time.Sleep(200 * time.Millisecond)
		after = s.sample(time.Now())
		if after.RSSBytes < allocBytes || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("%+v", after)
	require.Less(t, after.RSSBytes, int64(allocBytes))
	require.GreaterOrEqual(t, after.PeakRSSBytes, got.RSSBytes)
}

func containsVar(environ []byte, kv string) bool {
	for _, v := range splitNUL(environ) {
		if v == kv {
			return true
		}
	}
	return false
}

func splitNUL(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == 0 {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return out
}

// VmHWM catches a peak between two samples: a process's own high-water
// mark, read from its status file, is at least what it holds now.
func TestTreeSamplerPeakFromVmHWM(t *testing.T) {
	mark := newLaunchMark()
	prog := startTree(t, mark, "alloc")
	s := newTreeSampler(mark, prog.Process.Pid, time.Now())
	s.list = func() []int { return nil } // the samples see nothing ...
	require.Eventually(t, func() bool {
		for _, pid := range descendants(os.Getpid(), mark, 0) {
			if readHWMBytes(pid) >= allocBytes {
				return true
			}
		}
		return false
	}, 10*time.Second, 100*time.Millisecond)
	s.list = func() []int { return descendants(os.Getpid(), mark, 0) }
	got := s.sample(time.Now())
	require.GreaterOrEqual(t, got.PeakRSSBytes, int64(allocBytes))
}

func TestParseHWM(t *testing.T) {
	require.Equal(t, int64(1234<<10), parseHWM([]byte("Name:\tx\nVmPeak:\t  9 kB\nVmHWM:\t    1234 kB\nVmRSS:\t 5 kB\n")))
	require.Zero(t, parseHWM([]byte("Name:\tx\n")))
	require.Zero(t, parseHWM([]byte("Name:\tx\nVmHWM:\t-5 kB\n")))
	require.Zero(t, parseHWM([]byte("Name:\tx\nVmHWM:\t5 MB\n")))
}

// The cost of one sample of a tree of N idle processes, beside the
// baseline of listing the tree alone (what the orphan sweep does once).
func BenchmarkTreeSample(b *testing.B) {
	for _, n := range []int{2, 11, 51} { // sh and its children
		mark := newLaunchMark()
		modes := make([]string, n-1)
		for i := range modes {
			modes[i] = "sleep"
		}
		prog := startTree(b, mark, modes...)
		require.Eventually(b, func() bool { return len(descendants(os.Getpid(), mark, 0)) == n }, 20*time.Second, 50*time.Millisecond)
		b.Run(fmt.Sprintf("list/procs=%d", n), func(b *testing.B) {
			for b.Loop() {
				descendants(os.Getpid(), mark, prog.Process.Pid)
			}
		})
		b.Run(fmt.Sprintf("sample/procs=%d", n), func(b *testing.B) {
			s := newTreeSampler(mark, prog.Process.Pid, time.Now())
			for b.Loop() {
				if got := s.sample(time.Now()); got.Processes != n {
					b.Fatalf("%d processes, want %d", got.Processes, n)
				}
			}
		})
		_ = syscall.Kill(-prog.Process.Pid, syscall.SIGKILL)
	}
}
