//go:build !linux

package executor

import "syscall"

// setParentDeathSignal has no equivalent off Linux; there the program may
// outlive a SIGKILLed launcher.
func setParentDeathSignal(*syscall.SysProcAttr) {}
