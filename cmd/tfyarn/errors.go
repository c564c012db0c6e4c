package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/client"
)

// usageError is a mistake in how tfyarn was invoked.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitCodeError makes the process exit with code; err, if any, explains
// it (`tfyarn task` exits with its program's code, which needs no words).
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitCodeError) Unwrap() error { return e.err }

// confError is a configuration that could not be loaded or used.
type confError struct{ err error }

func (e *confError) Error() string { return e.err.Error() }
func (e *confError) Unwrap() error { return e.err }

// describe is the one place that turns an error into the line users see and
// the exit code. Everything a command returns passes through here. Errors
// about the cluster and its configuration are worded by the client
// (client.ExplainError); like every error but a failed job's, they exit 2.
func describe(err error, e *env) (msg string, code int) {
	var (
		ue *usageError
		ce *confError
		je *client.JobError
		xe *exitCodeError
	)
	switch {
	case errors.As(err, &xe):
		return xe.Error(), xe.code
	case errors.As(err, &je):
		// The job ran and did not succeed: the one exit code that is not 2.
		return je.Error(), exitJobFailed
	case errors.As(err, &ue):
		return ue.msg, exitUsage
	case errors.As(err, &ce):
		return strings.TrimPrefix(ce.err.Error(), "hadoopconf: "), exitUsage
	}
	if msg := client.ExplainError(err, e.confFrom, e.timeout); msg != "" {
		return msg, exitUsage
	}
	if errors.Is(err, context.Canceled) {
		return "interrupted", exitUsage
	}
	return err.Error(), exitUsage
}
