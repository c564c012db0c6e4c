package executor

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes this process the reaper of its orphaned
// descendants (orphans.go), so that what a program leaves behind can still
// be found and ended. Best effort: an error leaves them to init.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// EndWithParent has the kernel send sig to this process when its parent
// ends. A container's launcher and ApplicationMaster run under YARN's
// `bash -c ./tfyarn ...` wrapper, whose end is the container's end to the
// NodeManager: should it be killed alone, the container is reported over
// while tfyarn and the program would run on unseen, outside YARN's
// accounting. Best effort: an error leaves that to the NodeManager's cleanup.
func EndWithParent(sig syscall.Signal) error {
	return unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(sig), 0, 0, 0)
}
