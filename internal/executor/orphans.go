package executor

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What a program leaves behind. A program may start processes that leave
// its process group (setsid, a daemon's double fork) and so escape the
// signals the launcher sends the group: they would run on after the task,
// orphaned to pid 1, holding the container's memory, ports and GPUs. The
// launcher makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER,
// Linux), so that such orphans become its children instead of init's, and
// once the program has ended (or was stopped) it ends every process still
// descending from it: SIGTERM, OrphanGrace, SIGKILL, and reaps them.
//
// Which processes are the program's: the launcher's descendants (by
// parent, through /proc) whose environment carries this launch's mark
// (EnvLaunchMark, a random value the program inherits). Under `run --local`
// several launchers share one process, and each ends only its own
// program's. A process that cleared its environment is not recognized.

// EnvLaunchMark marks a launch's program and everything it starts.
const EnvLaunchMark = "TFYARN_LAUNCH_MARK"

// newLaunchMark is a random value for EnvLaunchMark.
func newLaunchMark() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// orphanPoll is how often the sweep looks whether its processes are gone.
const orphanPoll = 20 * time.Millisecond

// leftBehind lists what the program left running: the processes below
// this one that carry mark or are in the program's process group pgid.
// Listed before the group's SIGKILL, while their environment is readable,
// so that endOrphans can reap the ones it kills.
func leftBehind(mark string, pgid int) []int {
	return descendants(os.Getpid(), mark, pgid)
}

// endOrphans ends procs and what else carries mark by now: SIGTERM, then
// SIGKILL to those left after grace (at once when grace is 0), then reaps
// the ones that became this process's children. It returns how many still
// ran when it began, and gives up waiting at grace plus a few seconds.
func endOrphans(procs []int, mark string, grace time.Duration) int {
	running := 0
	for _, pid := range procs {
		if st, err := procState(pid); err == nil && st != "Z" {
			running++
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	if len(procs) == 0 {
		return 0
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && anyAlive(procs) {
		time.Sleep(orphanPoll)
	}
	// Another look: a process may have started one more while dying.
	procs = append(procs, descendants(os.Getpid(), mark, 0)...)
	for _, pid := range procs {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	reapDeadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(reapDeadline) && anyAlive(procs) {
		time.Sleep(orphanPoll)
	}
	return running
}

// anyAlive reaps those of pids that are this process's dead children and
// reports whether any still runs (a zombie of another parent is dead).
func anyAlive(pids []int) bool {
	alive := false
	for _, pid := range pids {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		switch {
		case got == pid: // reaped now
		case err == nil:
			alive = true // a child of ours, running
		default:
			if st, err := procState(pid); err == nil && st != "Z" {
				alive = true
			}
		}
	}
	return alive
}

// descendants lists the processes below root (by parent, through /proc)
// whose environment holds EnvLaunchMark=mark or whose process group is
// pgid (0: none).
func descendants(root int, mark string, pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	group := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f := statFields(pid)
		if len(f) < 3 {
			continue
		}
		if pp, _ := strconv.Atoi(f[1]); pp > 0 {
			children[pp] = append(children[pp], pid)
		}
		if pg, _ := strconv.Atoi(f[2]); pgid > 0 && pg == pgid {
			group[pid] = true
		}
	}
	want := []byte("\x00" + EnvLaunchMark + "=" + mark + "\x00")
	var out []int
	queue := append([]int(nil), children[root]...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		queue = append(queue, children[pid]...)
		if group[pid] {
			out = append(out, pid)
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err == nil && strings.Contains("\x00"+string(env), string(want)) {
			out = append(out, pid)
		}
	}
	return out
}

func procState(pid int) (string, error) {
	f := statFields(pid)
	if len(f) < 1 {
		return "", os.ErrNotExist
	}
	return f[0], nil
}

// statFields are /proc/PID/stat's fields after the command name (state,
// ppid, ...); the name, in parentheses, may hold spaces.
func statFields(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}
