//go:build !linux

package executor

import (
	"errors"
	"syscall"
)

// becomeSubreaper has no equivalent off Linux: there a program's detached
// descendants may outlive it.
func becomeSubreaper() error { return errors.New("no child subreaper off Linux") }

// EndWithParent has no equivalent off Linux.
func EndWithParent(sig syscall.Signal) error { return errors.New("no parent-death signal off Linux") }
