package executor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tfyarn/tfyarn/internal/envpack"
)

// child is the user's program, the leader of its own process group so
// that signals reach everything it spawned (data loaders, shells).
type child struct {
	cmd  *exec.Cmd
	pgid int
	done chan struct{} // closed once the program has been reaped
}

// pipeGrace bounds how long output is still copied after the program
// exits: a grandchild holding stdout open must not keep the launcher alive.
const pipeGrace = 2 * time.Second

func startChild(argv, env []string, dir string, stdout, stderr io.Writer) (*child, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	// A bare name is looked up in the program's PATH, which the job's
	// Python environment leads, not in the launcher's.
	if p, ok := lookPathIn(argv[0], env); ok {
		cmd.Path, cmd.Err = p, nil
	}
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = pipeGrace
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// In its own group the program escapes the signals YARN sends to the
	// container's group, so it must die with its launcher instead.
	setParentDeathSignal(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, pgid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // the outcome is in cmd.ProcessState
		close(c.done)
	}()
	return c, nil
}

// signal sends sig to the program's whole process group. A group that is
// already gone is not an error.
func (c *child) signal(sig syscall.Signal) error {
	err := syscall.Kill(-c.pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// exitCode is the program's exit code as a shell would report it: 128+N
// when signal N killed it.
func (c *child) exitCode() int {
	st := c.cmd.ProcessState
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// startError is the launcher's one line about a program that did not
// start. A program the container's user may not run (a --python under
// /root, where only root may enter) names the user and the node, and what
// to do.
func startError(program string, err error) error {
	if !errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("task launcher: starting %q: %w", program, err)
	}
	who, where := envpack.RunnerAndNode()
	return fmt.Errorf("task launcher: %s cannot be run by %s on %s (permission denied: it is not executable, or a directory on its path is closed to them); "+
		"use an interpreter every user can run, e.g. /usr/bin/python3: %w", program, who, where, err)
}

// startFailureCode follows the shell: 127 when the program is not found,
// 126 when it cannot be executed.
func startFailureCode(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return 127
	}
	return 126
}

func signalNumber(s os.Signal) int {
	if sig, ok := s.(syscall.Signal); ok {
		return int(sig)
	}
	return int(syscall.SIGTERM)
}

func describeSignal(s os.Signal) string {
	if sig, ok := s.(syscall.Signal); ok {
		if name := unix.SignalName(sig); name != "" {
			return name
		}
		return fmt.Sprintf("signal %d", int(sig))
	}
	return s.String()
}
