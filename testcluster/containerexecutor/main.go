package main

import (
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

func main() {
	// Nothing of the caller's environment is trusted or passed on.
	os.Clearenv()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run does one operation and returns the exit code the NodeManager reads.
func run(args []string, stdout, stderr io.Writer) int {
	code, err := dispatch(args, stdout)
	if err != nil {
		// The NodeManager puts only standard output into its diagnostics.
		fmt.Fprintf(stdout, "container-executor: %v\n", err)
		fmt.Fprintf(stderr, "container-executor: %v\n", err)
		if f, ok := err.(*failure); ok {
			return f.code
		}
		return exitSetupFailed
	}
	return code
}

func dispatch(args []string, stdout io.Writer) (int, error) {
	r, err := parseArgs(args)
	if err != nil {
		return 0, err
	}
	c, err := loadConfig()
	if err != nil {
		return 0, err
	}
	nmGID, err := checkExecutable(c)
	if err != nil {
		return 0, err
	}
	if os.Geteuid() != 0 {
		return 0, fail(exitBadExecutable, "not running as root (is the binary setuid root?)")
	}
	// Root's supplementary groups must not lend a user's file operations
	// their permissions.
	if err := syscall.Setgroups(nil); err != nil {
		return 0, fail(exitBadExecutable, "setgroups: %v", err)
	}
	a, err := validate(c, systemLookup, r)
	if err != nil {
		return 0, err
	}
	switch r.Op {
	case opCheckSetup:
		return 0, nil
	case opInitialize:
		return 0, runInitialize(r, a, nmGID)
	case opLaunch:
		return runLaunch(r, a, nmGID)
	case opSignal:
		return 0, runSignal(r, a)
	case opDelete:
		return 0, runDelete(r, a)
	case opList:
		return 0, runList(r, a, stdout)
	case opLaunchDocker:
		return runLaunchDocker(c, r, a, nmGID)
	case opRunDocker:
		return runRunDocker(c, r, stdout)
	case opModuleGPU:
		return 0, runModuleGPU(c, r)
	}
	return 0, fail(exitUnsupported, "operation %v", r.Op)
}

// checkExecutable checks that this binary is what the NodeManager's group
// alone may run: root-owned, setuid, its group the configured one, nothing
// for others, writable by root alone; and that the caller is root or in
// that group. It returns the group's id.
func checkExecutable(c *config) (int, error) {
	g, err := user.LookupGroup(c.Group)
	if err != nil {
		return 0, fail(exitInvalidConfig, "NodeManager group %s: %v", c.Group, err)
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return 0, fail(exitInvalidConfig, "NodeManager group %s has a non-numeric id", c.Group)
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, fail(exitBadExecutable, "finding this executable: %v", err)
	}
	st, err := os.Stat(exe)
	if err != nil {
		return 0, fail(exitBadExecutable, "%v", err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	switch {
	case sys.Uid != 0:
		return 0, fail(exitBadExecutable, "%s is not owned by root", exe)
	case int(sys.Gid) != gid:
		return 0, fail(exitBadExecutable, "%s's group is not the NodeManager's group %s", exe, c.Group)
	case st.Mode()&os.ModeSetuid == 0:
		return 0, fail(exitBadExecutable, "%s is not setuid", exe)
	case st.Mode().Perm()&0o027 != 0:
		return 0, fail(exitBadExecutable, "%s is writable by its group or usable by others (want mode 6050)", exe)
	}
	if err := rootOnlyPath(exe); err != nil {
		return 0, fail(exitBadExecutable, "%v", err)
	}
	if os.Getuid() != 0 && !inGroup(gid) {
		return 0, fail(exitBadExecutable, "the caller is neither root nor in group %s", c.Group)
	}
	return gid, nil
}

func inGroup(gid int) bool {
	if os.Getgid() == gid {
		return true
	}
	gs, _ := os.Getgroups()
	for _, g := range gs {
		if g == gid {
			return true
		}
	}
	return false
}

// runModuleGPU denies a container that runs on the host the node's GPUs it was not given: "c
// 195:MINOR rwm" (NVIDIA's character devices, /dev/nvidiaMINOR) into its devices cgroup, which
// the NodeManager created. The container's own GPUs stay allowed.
func runModuleGPU(c *config, r *request) error {
	deny, err := gpuDenyFile(c, r.ContainerID)
	if err != nil {
		return err
	}
	if _, err := checkPath(filepath.Dir(deny), c.CgroupDirs); err != nil {
		return err
	}
	for _, m := range r.ExcludedGPUs {
		if err := os.WriteFile(deny, []byte(fmt.Sprintf("c 195:%d rwm\n", m)), 0); err != nil {
			return fail(exitCgroupWriteFailed, "denying GPU %d to %s: %v", m, r.ContainerID, err)
		}
	}
	return nil
}
