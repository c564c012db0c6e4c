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

// pinMounts opens each mount source of s without following links and checks
// that the opened object is still the checked path below an allowed root.
// The files name the objects checked, whatever a user swaps in at the paths
// since (a link to / in his own directory); stageMounts hands them to Docker.
func pinMounts(c *config, s *runSpec) ([]*os.File, error) {
	var open []*os.File
	for _, m := range s.Mounts {
		f, err := openNoLinks(m.Src)
		if err != nil {
			closeAll(open)
			return nil, fail(exitInvalidDocker, "docker mount source %s: %v", clip(m.Src), err)
		}
		open = append(open, f)
		at, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
		if err != nil || at != m.Src {
			closeAll(open)
			return nil, fail(exitInvalidDocker, "docker mount source %s moved while it was checked (now %s)", clip(m.Src), clip(at))
		}
		if err := checkMountSource(c, m, at); err != nil {
			closeAll(open)
			return nil, err
		}
	}
	return open, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// stageMounts bind-mounts each pinned object onto dir/N (dir: made here,
// root's alone, below the NodeManager's private directory of the container)
// and makes those the sources Docker mounts: no user can change what a
// path there leads to. (Docker cannot take /proc/PID/fd/N itself: its runtime
// opens the source in the container's new mount namespace, where the magic
// link's mount is foreign.) unstage unmounts and removes them; the running
// container keeps its own mounts.
func stageMounts(s *runSpec, pinned []*os.File, dir string) (unstage func(), err error) {
	var staged []string
	unstage = func() {
		for _, p := range staged {
			_ = unix.Unmount(p, unix.MNT_DETACH)
			_ = os.Remove(p)
		}
		_ = os.Remove(dir)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fail(exitSetupFailed, "docker mount staging directory: %v", err)
	}
	for i, f := range pinned {
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			unstage()
			return nil, fail(exitSetupFailed, "docker mount source %s: %v", clip(s.Mounts[i].Src), err)
		}
		p := fmt.Sprintf("%s/%d", dir, i)
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			err = os.Mkdir(p, 0o700)
		} else {
			err = os.WriteFile(p, nil, 0o600)
		}
		if err == nil {
			staged = append(staged, p)
			err = unix.Mount(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), p, "", unix.MS_BIND, "")
		}
		if err != nil {
			unstage()
			return nil, fail(exitSetupFailed, "staging docker mount source %s: %v", clip(s.Mounts[i].Src), err)
		}
		s.Mounts[i].Src = p
	}
	return unstage, nil
}
