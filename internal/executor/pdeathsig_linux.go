package executor

import "syscall"

// setParentDeathSignal has the kernel SIGKILL the program when the thread
// that started it dies. Go does not retire threads unless a goroutine
// locked to one exits, which the launcher never does.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
