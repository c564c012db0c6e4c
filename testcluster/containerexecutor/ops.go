package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Largest NodeManager-private file (launch script, tokens) copied for a user.
const maxPrivateFile = 64 << 20

// systemLookup reads the system's user and group databases.
func systemLookup(name string) (*account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return nil, errors.New("non-numeric uid or gid")
	}
	a := &account{Name: name, UID: uid, GID: gid}
	if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if g, err := strconv.Atoi(s); err == nil && g != 0 {
				a.Groups = append(a.Groups, g)
			}
		}
	}
	return a, nil
}

// asUser runs fn on one OS thread whose filesystem identity is the user's
// (setfsuid/setfsgid are per thread), so that what fn creates is the user's
// and what it opens is checked against the user's permissions: a link the
// user planted cannot make root write through it.
func asUser(a *account, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		// The thread is not unlocked: it dies with the goroutine, so the
		// changed identity never serves another goroutine.
		runtime.LockOSThread()
		unix.Setfsgid(a.GID)
		unix.Setfsuid(a.UID)
		if prev, _ := unix.SetfsuidRetUid(-1); prev != a.UID {
			done <- fmt.Errorf("could not take uid %d's filesystem identity", a.UID)
			return
		}
		done <- fn()
	}()
	return <-done
}

// mkdirOwned creates dir (its parent must exist) as root for the user,
// or accepts it when it already is a real directory of the user.
func mkdirOwned(dir string, a *account, gid int, mode os.FileMode) error {
	err := unix.Mkdir(dir, 0o700)
	if err == nil {
		if err := unix.Lchown(dir, a.UID, gid); err != nil {
			return err
		}
		return unix.Chmod(dir, uint32(mode.Perm())|modeBits(mode))
	}
	if !errors.Is(err, unix.EEXIST) {
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	// Another run of this helper (two containers of one application starting on a node at once)
	// may be between its mkdir and its chown: a directory still root's is waited on a moment.
	deadline := time.Now().Add(inProgressWait)
	for {
		err := isUsersDir(dir, a)
		if err == nil || !stillRoots(dir) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// inProgressWait bounds how long mkdirOwned waits for another run's chown.
var inProgressWait = 5 * time.Second

// stillRoots says whether dir is a directory root owns (not followed if a link).
func stillRoots(dir string) bool {
	st, err := os.Lstat(dir)
	return err == nil && st.IsDir() && ownedBy(st, 0)
}

func modeBits(m os.FileMode) uint32 {
	var b uint32
	if m&os.ModeSetgid != 0 {
		b |= unix.S_ISGID
	}
	return b
}

func isUsersDir(dir string, a *account) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return &pathError{dir, "exists and is not a directory"}
	}
	if !ownedBy(st, a.UID) {
		return &pathError{dir, "exists and does not belong to " + a.Name}
	}
	return nil
}

// mkdirRoot makes a root-owned directory (world-traversable), or accepts
// an existing one that is root's.
func mkdirRoot(dir string) error {
	err := unix.Mkdir(dir, 0o755)
	if err == nil || !errors.Is(err, unix.EEXIST) {
		if err != nil {
			return &os.PathError{Op: "mkdir", Path: dir, Err: err}
		}
		return nil
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() || !ownedBy(st, 0) {
		return &pathError{dir, "is not a root-owned directory"}
	}
	return nil
}

// mkdirAsUser creates dir with the user's filesystem identity (call inside
// asUser), or accepts the user's existing directory.
func mkdirAsUser(dir string, a *account, mode uint32) error {
	if err := unix.Mkdir(dir, mode); err != nil && !errors.Is(err, unix.EEXIST) {
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return isUsersDir(dir, a)
}

// readPrivate reads a NodeManager-private file (root's, not a link).
func readPrivate(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || !ownedBy(st, 0) {
		return nil, &pathError{p, "is not a regular file of root's"}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPrivateFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxPrivateFile {
		return nil, &pathError{p, "is larger than 64 MiB"}
	}
	return b, nil
}

// writeAsUser writes a file with the user's filesystem identity (inside
// asUser), never through a link.
func writeAsUser(p string, b []byte, mode uint32) error {
	fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(os.FileMode(mode)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// prepareUserDirs creates, in each local directory, the user's usercache
// directory (root makes it, setgid to the NodeManager's group, 2750) and
// below it, as the user, filecache, appcache and the application's
// directory; and in each log directory the application's log directory.
func prepareUserDirs(r *request, a *account, nmGID int) error {
	for _, ld := range r.LocalDirs {
		if err := mkdirRoot(ld + "/usercache"); err != nil {
			return err
		}
		if err := mkdirOwned(userDir(ld, r.User), a, nmGID, 0o750|os.ModeSetgid); err != nil {
			return err
		}
	}
	for _, ld := range r.LogDirs {
		if err := mkdirOwned(ld+"/"+r.AppID, a, nmGID, 0o750|os.ModeSetgid); err != nil {
			return err
		}
	}
	return asUser(a, func() error {
		for _, ld := range r.LocalDirs {
			ud := userDir(ld, r.User)
			for _, d := range []string{ud + "/filecache", ud + "/appcache", appDir(ld, r.User, r.AppID)} {
				if err := mkdirAsUser(d, a, 0o750); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// runInitialize prepares the application's directories, copies the
// localizer's tokens into the first one and becomes the localizer, as the
// user, in that directory.
func runInitialize(r *request, a *account, nmGID int) error {
	if err := prepareUserDirs(r, a, nmGID); err != nil {
		return fail(exitSetupFailed, "initialize: %v", err)
	}
	tokens, err := readPrivate(r.TokensPath)
	if err != nil {
		return fail(exitSetupFailed, "initialize: tokens: %v", err)
	}
	dir := appDir(r.LocalDirs[0], r.User, r.AppID)
	if err := asUser(a, func() error {
		return writeAsUser(dir+"/"+filepath.Base(r.TokensPath), tokens, 0o600)
	}); err != nil {
		return fail(exitSetupFailed, "initialize: %v", err)
	}
	if err := becomeUser(a); err != nil {
		return fail(exitSetupFailed, "initialize: %v", err)
	}
	if err := os.Chdir(dir); err != nil {
		return fail(exitSetupFailed, "initialize: %v", err)
	}
	err = syscall.Exec(r.Command[0], r.Command, childEnv())
	return fail(exitCannotExecute, "initialize: starting the localizer %s: %v", r.Command[0], err)
}

// childEnv is the localizer's environment: nothing of the caller's.
func childEnv() []string {
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
}

// becomeUser drops root for good, on every thread.
func becomeUser(a *account) error {
	if err := syscall.Setgroups(a.Groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(a.GID, a.GID, a.GID); err != nil {
		return fmt.Errorf("setresgid: %w", err)
	}
	if err := syscall.Setresuid(a.UID, a.UID, a.UID); err != nil {
		return fmt.Errorf("setresuid: %w", err)
	}
	if syscall.Setuid(0) == nil {
		return errors.New("could still regain root after dropping it")
	}
	return nil
}

// runLaunch creates the container's working and log directories, copies
// the launch script and tokens into the working directory, joins the
// container's cgroups, starts the script as the user in a session of its
// own, records its pid where the NodeManager waits for it, and exits with
// the container's status.
// prepareLaunch creates the container's directories as the user and copies
// the NodeManager's script and tokens into its working directory; it
// returns the script's path there.
func prepareLaunch(r *request, a *account, nmGID int) (string, error) {
	if err := prepareUserDirs(r, a, nmGID); err != nil {
		return "", fail(exitSetupFailed, "launch: %v", err)
	}
	script, err := readPrivate(r.ScriptPath)
	if err != nil {
		return "", fail(exitSetupFailed, "launch: script: %v", err)
	}
	tokens, err := readPrivate(r.TokensPath)
	if err != nil {
		return "", fail(exitSetupFailed, "launch: tokens: %v", err)
	}
	scriptInWork := r.WorkDir + "/launch_container.sh"
	err = asUser(a, func() error {
		for _, ld := range r.LocalDirs {
			if err := mkdirAsUser(appDir(ld, r.User, r.AppID)+"/"+r.ContainerID, a, 0o750); err != nil {
				return err
			}
		}
		for _, ld := range r.LogDirs {
			if err := mkdirAsUser(ld+"/"+r.AppID+"/"+r.ContainerID, a, 0o750); err != nil {
				return err
			}
		}
		if err := writeAsUser(r.WorkDir+"/container_tokens", tokens, 0o600); err != nil {
			return err
		}
		return writeAsUser(scriptInWork, script, 0o700)
	})
	if err != nil {
		return "", fail(exitSetupFailed, "launch: %v", err)
	}
	return scriptInWork, nil
}

func runLaunch(r *request, a *account, nmGID int) (int, error) {
	scriptInWork, err := prepareLaunch(r, a, nmGID)
	if err != nil {
		return 0, err
	}
	// The script inherits the cgroups of the process that starts it: join
	// them first (cgroup.procs moves every thread of this process; v1's
	// tasks file would move only one).
	for _, f := range r.CgroupTasks {
		procs := filepath.Dir(f) + "/cgroup.procs"
		if err := writeRootFile(procs, strconv.Itoa(os.Getpid())); err != nil {
			return 0, fail(exitCgroupWriteFailed, "launch: joining cgroup %s: %v", filepath.Dir(f), err)
		}
	}
	cmd := exec.Command("/bin/bash", scriptInWork)
	cmd.Dir = r.WorkDir
	// Empty: the script's whitelisted variables (PATH, LANG, ...) then take the NodeManager's
	// values it was written with.
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setsid: true,
		Credential: &syscall.Credential{
			Uid: uint32(a.UID), Gid: uint32(a.GID), Groups: toUint32(a.Groups),
		},
	}
	syscall.Umask(0o027)
	if err := cmd.Start(); err != nil {
		return 0, fail(exitCannotExecute, "launch: starting %s: %v", scriptInWork, err)
	}
	if err := writePIDFile(r.PIDFile, cmd.Process.Pid); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return 0, fail(exitSetupFailed, "launch: pid file: %v", err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 0, fail(exitCannotExecute, "launch: waiting for the container: %v", err)
	}
	return 0, nil
}

func toUint32(ids []int) []uint32 {
	out := make([]uint32, len(ids))
	for i, id := range ids {
		out[i] = uint32(id)
	}
	return out
}

// writeRootFile writes s into an existing file, not through a link.
func writeRootFile(p, s string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writePIDFile writes the pid aside and renames it into place, in the
// NodeManager's own (root-owned) directory.
func writePIDFile(p string, pid int) error {
	st, err := os.Lstat(filepath.Dir(p))
	if err != nil {
		return err
	}
	if !st.IsDir() || !ownedBy(st, 0) || st.Mode().Perm()&0o022 != 0 {
		return &pathError{filepath.Dir(p), "is not a directory only root can write"}
	}
	tmp := p + ".tmp"
	fd, err := unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return &os.PathError{Op: "open", Path: tmp, Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	if _, err := f.WriteString(strconv.Itoa(pid) + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// runSignal signals the container's process group (its session leader is
// the launched script), as the user, so that the kernel refuses anyone
// else's process.
func runSignal(r *request, a *account) error {
	if err := becomeUser(a); err != nil {
		return fail(exitSignalFailed, "signal: %v", err)
	}
	sig := syscall.Signal(r.Signal)
	err := syscall.Kill(-r.PID, sig)
	if errors.Is(err, syscall.ESRCH) {
		err = syscall.Kill(r.PID, sig)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ESRCH):
		return fail(exitInvalidPID, "signal: no process %d", r.PID)
	default:
		return fail(exitSignalFailed, "signal %d to %d: %v", r.Signal, r.PID, err)
	}
}

// runDelete removes each target as the user. A directory the user owns in
// a root-owned parent (usercache/USER, a log directory's APPID) is emptied
// as the user and then removed by root.
func runDelete(r *request, a *account) error {
	targets, err := deleteTargets(r)
	if err != nil {
		return err
	}
	var failed []string
	for _, t := range targets {
		if err := asUser(a, func() error { return os.RemoveAll(t) }); err == nil {
			continue
		}
		st, err := os.Lstat(t)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil && st.IsDir() && ownedBy(st, a.UID) {
			if unix.Rmdir(t) == nil {
				continue
			}
		}
		failed = append(failed, t)
	}
	if len(failed) > 0 {
		return fail(exitDeleteFailed, "delete as %s left %s", a.Name, strings.Join(failed, ", "))
	}
	return nil
}

// runList prints the names in a directory, one a line, as the user sees it.
func runList(r *request, a *account, out io.Writer) error {
	var names []string
	if err := asUser(a, func() error {
		f, err := os.Open(r.Dir)
		if err != nil {
			return err
		}
		defer f.Close()
		names, err = f.Readdirnames(-1)
		return err
	}); err != nil {
		return fail(exitInvalidPath, "list: %v", err)
	}
	for _, n := range names {
		fmt.Fprintln(out, n)
	}
	return nil
}
