//go:build !linux

package executor

import "errors"

// becomeSubreaper has no equivalent off Linux: there a program's detached
// descendants may outlive it.
func becomeSubreaper() error { return errors.New("no child subreaper off Linux") }
