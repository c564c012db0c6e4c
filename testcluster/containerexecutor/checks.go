package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

var (
	errNotAbs  = errors.New("not an absolute path")
	errNoOwner = errors.New("no owner information")
)

type pathError struct {
	path, why string
}

func (e *pathError) Error() string { return e.path + " " + e.why }

// account is a Unix user as the helper needs it.
type account struct {
	Name   string
	UID    int
	GID    int
	Groups []int // supplementary groups
}

// userLookup finds a user; the real one reads the system's user database.
type userLookup func(name string) (*account, error)

var (
	userNamePattern    = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
	appIDPattern       = regexp.MustCompile(`^application_([0-9]{1,19})_([0-9]{1,9})$`)
	containerIDPattern = regexp.MustCompile(`^container_(?:e[0-9]{1,9}_)?([0-9]{1,19})_([0-9]{1,9})_[0-9]{1,9}_[0-9]{1,12}$`)
)

// checkUser accepts name only if it is a well-formed name of an existing
// user who is not root, not banned and at or above min.user.id (unless
// allowed by name).
func checkUser(c *config, lookup userLookup, name string) (*account, error) {
	if !userNamePattern.MatchString(name) {
		return nil, fail(exitInvalidUser, "user name %q is not a valid Unix user name", clip(name))
	}
	if name == "root" || slices.Contains(c.Banned, name) {
		return nil, fail(exitInvalidUser, "user %s is banned", name)
	}
	if len(c.TestUsers) > 0 && !isTestUser(c.TestUsers, name) {
		return nil, fail(exitInvalidUser, "user %s is not one of the test cluster's users (test.users %s): submit as one of them", name, strings.Join(c.TestUsers, ","))
	}
	a, err := lookup(name)
	if err != nil {
		return nil, fail(exitInvalidUser, "user %s: %v", name, err)
	}
	if a.UID == 0 {
		return nil, fail(exitInvalidUser, "user %s has uid 0", name)
	}
	if a.UID < c.MinUID && !slices.Contains(c.AllowedUsers, name) {
		return nil, fail(exitInvalidUser, "user %s has uid %d, below min.user.id %d", name, a.UID, c.MinUID)
	}
	if a.GID == 0 {
		return nil, fail(exitInvalidUser, "user %s's primary group is root's", name)
	}
	return a, nil
}

// isTestUser reports whether name is one of users: equal to an entry, or
// starting with an entry's text before its final '*'.
func isTestUser(users []string, name string) bool {
	for _, u := range users {
		if prefix, ok := strings.CutSuffix(u, "*"); ok && prefix != "" && strings.HasPrefix(name, prefix) || u == name {
			return true
		}
	}
	return false
}

// checkAppContainer checks an application id and, when given, that the
// container id is well formed and belongs to that application.
func checkAppContainer(appID, containerID string) error {
	am := appIDPattern.FindStringSubmatch(appID)
	if am == nil {
		return fail(exitUsage, "application id %q is malformed", clip(appID))
	}
	if containerID == "" {
		return nil
	}
	cm := containerIDPattern.FindStringSubmatch(containerID)
	if cm == nil {
		return fail(exitUsage, "container id %q is malformed", clip(containerID))
	}
	appNum, _ := strconv.ParseUint(am[2], 10, 64)
	contAppNum, _ := strconv.ParseUint(cm[2], 10, 64)
	if cm[1] != am[1] || appNum != contAppNum {
		return fail(exitUsage, "container %s is not in application %s", containerID, appID)
	}
	return nil
}

// under reports whether p is root itself or lies below it (both clean).
func under(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

// checkPath accepts p only if it is absolute and clean, lies in one of
// roots, and no component from that root down to p is a symbolic link
// (components that do not exist yet are fine: they are created later
// without following links). It returns the root p lies in.
func checkPath(p string, roots []string) (string, error) {
	if p == "" || !filepath.IsAbs(p) || filepath.Clean(p) != p || len(p) > 4096 {
		return "", fail(exitInvalidPath, "path %q is not absolute and clean", clip(p))
	}
	var root string
	for _, r := range roots {
		if under(p, r) && len(r) > len(root) {
			root = r
		}
	}
	if root == "" {
		return "", fail(exitInvalidPath, "path %s is outside the NodeManager's directories", clip(p))
	}
	// The roots themselves come from the root-owned configuration; below
	// them every existing component must be a real directory or file.
	cur := root
	rest := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
	for _, part := range append([]string{""}, splitPath(rest)...) {
		if part != "" {
			cur = cur + "/" + part
		}
		st, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			return root, nil
		}
		if err != nil {
			return "", fail(exitInvalidPath, "path %s: %v", clip(p), err)
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return "", fail(exitInvalidPath, "path %s: %s is a symbolic link", clip(p), cur)
		}
	}
	return root, nil
}

func splitPath(rest string) []string {
	if rest == "" {
		return nil
	}
	return strings.Split(rest, "/")
}

// checkPaths applies checkPath to each of ps.
func checkPaths(ps []string, roots []string) error {
	for _, p := range ps {
		if _, err := checkPath(p, roots); err != nil {
			return err
		}
	}
	return nil
}

// ownedBy reports whether st's file belongs to uid.
func ownedBy(st os.FileInfo, uid int) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == uid
}

// userDir is the user's directory in a local directory.
func userDir(localDir, user string) string { return localDir + "/usercache/" + user }

// appDir is the application's directory of the user in a local directory.
func appDir(localDir, user, appID string) string {
	return userDir(localDir, user) + "/appcache/" + appID
}

// checkWorkDir accepts a launch's working directory only where YARN puts
// it: LOCALDIR/usercache/USER/appcache/APPID/CONTAINERID for one of the
// launch's local directories.
func checkWorkDir(r *request) error {
	for _, ld := range r.LocalDirs {
		if r.WorkDir == appDir(ld, r.User, r.AppID)+"/"+r.ContainerID {
			return nil
		}
	}
	return fail(exitInvalidPath, "working directory %s is not LOCALDIR/usercache/%s/appcache/%s/%s of a local directory", clip(r.WorkDir), r.User, r.AppID, r.ContainerID)
}

// checkCgroupFile accepts a cgroup tasks file below a configured hierarchy.
func checkCgroupFile(c *config, p string) error {
	if _, err := checkPath(p, c.CgroupDirs); err != nil {
		return fail(exitCgroupWriteFailed, "cgroup file: %v", err)
	}
	if base := filepath.Base(p); base != "tasks" && base != "cgroup.procs" {
		return fail(exitCgroupWriteFailed, "cgroup file %s is not a tasks or cgroup.procs file", clip(p))
	}
	return nil
}

// validate checks a parsed request against the configuration and the
// system before anything is created.
func validate(c *config, lookup userLookup, r *request) (*account, error) {
	if r.Op == opCheckSetup {
		return nil, nil
	}
	if r.Op == opModuleGPU {
		_, err := gpuDenyFile(c, r.ContainerID)
		return nil, err
	}
	if r.Op == opRunDocker {
		if c.DockerBinary == "" {
			return nil, fail(exitUnsupported, "docker commands are not enabled in this container-executor's configuration (docker.binary)")
		}
		return nil, checkDockerFile(c, r.DockerFile, "")
	}
	if r.User != r.RunAsUser {
		// limit-users=false: containers run as the submitting user itself.
		if _, err := checkUser(c, lookup, r.User); err != nil {
			return nil, err
		}
	}
	a, err := checkUser(c, lookup, r.RunAsUser)
	if err != nil {
		return nil, err
	}
	if !userNamePattern.MatchString(r.User) {
		return nil, fail(exitInvalidUser, "user name %q is not a valid Unix user name", clip(r.User))
	}
	all := append(append([]string(nil), c.LocalDirs...), c.LogDirs...)
	var opErr error
	switch r.Op {
	case opInitialize:
		opErr = checkInitialize(c, r)
	case opLaunch, opLaunchDocker:
		opErr = checkLaunch(c, r)
	case opDelete:
		opErr = checkDelete(r, all)
	case opList:
		_, opErr = checkPath(r.Dir, all)
	}
	if opErr != nil {
		return nil, opErr
	}
	return a, nil
}

// checkInitialize checks a localizer's request: its application and
// container, its directories, its tokens (the NodeManager's private ones of
// the container) and its command.
func checkInitialize(c *config, r *request) error {
	if err := checkAppContainer(r.AppID, r.ContainerID); err != nil {
		return err
	}
	if err := checkPaths(r.LocalDirs, c.LocalDirs); err != nil {
		return err
	}
	if err := checkPaths(r.LogDirs, c.LogDirs); err != nil {
		return err
	}
	if _, err := checkPath(r.TokensPath, c.LocalDirs); err != nil {
		return err
	}
	if filepath.Base(filepath.Dir(r.TokensPath)) != "nmPrivate" || !strings.HasPrefix(filepath.Base(r.TokensPath), r.ContainerID) {
		return fail(exitInvalidPath, "localizer tokens %s are not nmPrivate/%s... of a local directory", clip(r.TokensPath), r.ContainerID)
	}
	if len(r.Command) == 0 || !filepath.IsAbs(r.Command[0]) {
		return fail(exitUsage, "the localizer command must start with an absolute program path")
	}
	return nil
}

// checkLaunch checks a container's launch (in Docker or not): its
// application and container, its directories and files (the NodeManager's
// private ones of the container), its cgroup files and its docker command.
func checkLaunch(c *config, r *request) error {
	if err := checkAppContainer(r.AppID, r.ContainerID); err != nil {
		return err
	}
	if err := checkPaths(r.LocalDirs, c.LocalDirs); err != nil {
		return err
	}
	if err := checkPaths(r.LogDirs, c.LogDirs); err != nil {
		return err
	}
	if err := checkPaths([]string{r.WorkDir, r.ScriptPath, r.TokensPath, r.PIDFile}, c.LocalDirs); err != nil {
		return err
	}
	if err := checkWorkDir(r); err != nil {
		return err
	}
	// The NodeManager's own files for this container, never another's.
	private := "/nmPrivate/" + r.AppID + "/" + r.ContainerID
	for _, p := range []string{r.ScriptPath, r.TokensPath, r.PIDFile} {
		if !strings.HasSuffix(filepath.Dir(p), private) {
			return fail(exitInvalidPath, "%s is not in the NodeManager's private directory of %s (LOCALDIR%s)", clip(p), r.ContainerID, private)
		}
	}
	for _, f := range r.CgroupTasks {
		if err := checkCgroupFile(c, f); err != nil {
			return err
		}
	}
	if r.Op == opLaunchDocker {
		if c.DockerBinary == "" {
			return fail(exitUnsupported, "docker launches are not enabled in this container-executor's configuration (docker.binary)")
		}
		if err := checkDockerFile(c, r.DockerFile, private); err != nil {
			return err
		}
	}
	return nil
}

// checkDelete checks a deletion: what it removes is inside the NodeManager's
// directories (all), never one of them.
func checkDelete(r *request, all []string) error {
	targets, err := deleteTargets(r)
	if err != nil {
		return err
	}
	if err := checkPaths(targets, all); err != nil {
		return err
	}
	for _, t := range targets {
		if slices.Contains(all, t) {
			return fail(exitInvalidPath, "refusing to delete the NodeManager directory %s itself", t)
		}
	}
	return nil
}

// deleteTargets is what a delete request removes: SUBDIR (absolute) when
// no base directory is given, else BASEDIR/SUBDIR for each base.
func deleteTargets(r *request) ([]string, error) {
	if len(r.BaseDirs) == 0 {
		return []string{r.SubDir}, nil
	}
	var out []string
	for _, b := range r.BaseDirs {
		if !filepath.IsAbs(b) || filepath.Clean(b) != b {
			return nil, fail(exitInvalidPath, "base directory %q is not absolute and clean", clip(b))
		}
		t := b
		if r.SubDir != "" {
			if filepath.IsAbs(r.SubDir) || filepath.Clean(r.SubDir) != r.SubDir || r.SubDir == ".." || strings.HasPrefix(r.SubDir, "../") {
				return nil, fail(exitInvalidPath, "subdirectory %q is not a clean relative path", clip(r.SubDir))
			}
			t = b + "/" + r.SubDir
		}
		out = append(out, t)
	}
	return out, nil
}

// checkDockerFile accepts a docker command file only in the NodeManager's
// private directory of one container (LOCALDIR/nmPrivate/APPID/CONTAINERID),
// of that container's launch when private is given.
func checkDockerFile(c *config, p, private string) error {
	if _, err := checkPath(p, c.LocalDirs); err != nil {
		return err
	}
	dir := filepath.Dir(p)
	cid, app := filepath.Base(dir), filepath.Base(filepath.Dir(dir))
	ok := filepath.Base(filepath.Dir(filepath.Dir(dir))) == "nmPrivate" && checkAppContainer(app, cid) == nil
	if private != "" {
		ok = ok && strings.HasSuffix(dir, private)
	}
	if !ok || !strings.HasSuffix(p, ".cmd") {
		return fail(exitInvalidPath, "docker command file %s is not a .cmd file in the NodeManager's private directory of a container (LOCALDIR/nmPrivate/APPID/CONTAINERID)", clip(p))
	}
	return nil
}

// gpuDenyFile is the devices.deny file of the container's devices cgroup, which the NodeManager
// made below the cluster's devices hierarchy (a cgroups.dirs entry under a "devices" mount).
func gpuDenyFile(c *config, containerID string) (string, error) {
	if !containerIDPattern.MatchString(containerID) {
		return "", fail(exitUsage, "--module-gpu: %q is not a YARN container id", clip(containerID))
	}
	for _, h := range c.CgroupDirs {
		if filepath.Base(filepath.Dir(h)) == "devices" {
			return filepath.Join(h, containerID, "devices.deny"), nil
		}
	}
	return "", fail(exitUnsupported, "--module-gpu: the configuration names no devices cgroup (cgroups.dirs)")
}
