package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// openNoLinks opens p (absolute, clean) as an O_PATH handle, one component
// at a time from /, each with O_NOFOLLOW: a symbolic link anywhere on the
// way is refused, never followed. The handle names the object the checks
// saw, whatever is renamed or swapped at p afterwards.
func openNoLinks(p string) (*os.File, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	for _, name := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if name == "" || name == "." || name == ".." {
			unix.Close(fd)
			return nil, &pathError{p, "is not a clean absolute path"}
		}
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(next)
			return nil, &pathError{p, "has a symbolic link on the way (" + name + ")"}
		}
		fd = next
	}
	return os.NewFile(uintptr(fd), p), nil
}

// pinMounts opens each mount source of s without following links, checks
// that the opened object is still the checked path below an allowed root,
// and replaces the source with /proc/PID/fd/N of this process: Docker then
// mounts the very object checked, not whatever a user swapped in at the path
// since (a link to / in his own directory). The files stay open until the
// caller closes them, after the container has started.
func pinMounts(c *config, s *runSpec) ([]*os.File, error) {
	var open []*os.File
	closeAll := func() {
		for _, f := range open {
			f.Close()
		}
	}
	for i, m := range s.Mounts {
		f, err := openNoLinks(m.Src)
		if err != nil {
			closeAll()
			return nil, fail(exitInvalidDocker, "docker mount source %s: %v", clip(m.Src), err)
		}
		open = append(open, f)
		self := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
		at, err := os.Readlink(self)
		if err != nil || at != m.Src {
			closeAll()
			return nil, fail(exitInvalidDocker, "docker mount source %s moved while it was checked (now %s)", clip(m.Src), clip(at))
		}
		if err := checkMountSource(c, m, at); err != nil {
			closeAll()
			return nil, err
		}
		s.Mounts[i].Src = fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd())
	}
	return open, nil
}
