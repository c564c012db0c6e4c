package main

import (
	"fmt"
	"strconv"
	"strings"
)

// Exit codes. The NodeManager gives meaning to 2, 7, 9, 22, 24 and 27
// (PrivilegedOperation.ResultCode); a launch otherwise exits with the
// container's own status (128+N when signal N ended it).
const (
	exitOK                = 0
	exitUsage             = 1  // wrong number or shape of arguments
	exitInvalidUser       = 2  // user name malformed, unknown, banned or below min.user.id
	exitUnsupported       = 3  // an operation this helper does not do (Docker, tc, mounts)
	exitInvalidPath       = 4  // a path outside the configured directories, or a symbolic link on the way
	exitSetupFailed       = 5  // creating a directory or copying a file failed
	exitCannotExecute     = 7  // the container script or the localizer could not be started
	exitInvalidPID        = 9  // no such process (liveness check of a finished container)
	exitSignalFailed      = 11 // the process exists but could not be signalled
	exitDeleteFailed      = 12 // delete as user left something behind
	exitBadExecutable     = 22 // this binary is not root-owned, setuid, group-only executable
	exitInvalidConfig     = 24 // configuration file missing, malformed or writable by others
	exitCgroupWriteFailed = 27 // could not join the container's cgroups
	exitInvalidDocker     = 40 // a docker command file the cluster does not allow (image, mount, network, user...)
	exitDockerFailed      = 41 // the docker CLI failed (its own reason follows)
)

// Bounds on what the caller hands us: the localizer's classpath is the
// longest argument the NodeManager sends (a few hundred jars).
const (
	maxArgs     = 4096
	maxArgBytes = 1 << 20
	maxListLen  = 64 // directories in one '%'-separated list
)

type opKind int

const (
	opCheckSetup opKind = iota
	opInitialize
	opLaunch
	opSignal
	opDelete
	opList
	opLaunchDocker
	opRunDocker
	opModuleGPU
)

func (k opKind) String() string {
	return [...]string{"checksetup", "initialize", "launch", "signal", "delete", "list", "launch-docker", "run-docker", "module-gpu"}[k]
}

// request is one parsed command line; which fields are set depends on Op.
type request struct {
	Op        opKind
	RunAsUser string
	User      string

	AppID       string
	ContainerID string // launch; the localizer id for initialize
	TokensPath  string
	LocalDirs   []string
	LogDirs     []string
	Command     []string // initialize: the localizer's command line

	WorkDir     string
	ScriptPath  string
	PIDFile     string
	CgroupTasks []string // launch: "cgroups=" files the container joins

	PID    int
	Signal int

	SubDir   string
	BaseDirs []string
	Dir      string

	DockerFile string // launch-docker, run-docker: the NodeManager's docker command file

	ExcludedGPUs []int // module-gpu: minor numbers of the GPUs the container must not open
}

// failure is an error with the exit code the NodeManager should see.
type failure struct {
	code int
	msg  string
}

func (f *failure) Error() string { return f.msg }

func fail(code int, format string, args ...any) *failure {
	return &failure{code: code, msg: fmt.Sprintf(format, args...)}
}

// parseArgs reads the NodeManager's command line (without the program
// name). It checks shapes only; users and paths are checked against the
// system and the configuration later.
func parseArgs(args []string) (*request, error) {
	if err := checkArgShapes(args); err != nil {
		return nil, err
	}
	if strings.HasPrefix(args[0], "--") {
		return parseOption(args)
	}
	if len(args) < 3 {
		return nil, fail(exitUsage, "expected RUNAS USER COMMAND ..., got %d arguments", len(args))
	}
	r := &request{RunAsUser: args[0], User: args[1]}
	cmd, err := strconv.Atoi(args[2])
	if err != nil || len(args[2]) > 2 {
		return nil, fail(exitUsage, "command %q is not a number", clip(args[2]))
	}
	rest := args[3:]
	switch cmd {
	case 0:
		// APPID LOCID TOKENS LOCALDIRS LOGDIRS JAVA [ARGS...]
		if len(rest) < 6 {
			return nil, fail(exitUsage, "initialize needs APPID LOCID TOKENS LOCALDIRS LOGDIRS COMMAND..., got %d arguments", len(rest))
		}
		r.Op = opInitialize
		r.AppID, r.ContainerID, r.TokensPath = rest[0], rest[1], rest[2]
		if r.LocalDirs, err = splitDirs("local", rest[3]); err != nil {
			return nil, err
		}
		if r.LogDirs, err = splitDirs("log", rest[4]); err != nil {
			return nil, err
		}
		r.Command = append([]string(nil), rest[5:]...)
	case 1:
		resources, err := parseLaunch("launch", "RESOURCES", rest, r)
		if err != nil {
			return nil, err
		}
		r.Op = opLaunch
		if r.CgroupTasks, err = parseResources(resources); err != nil {
			return nil, err
		}
	case 2:
		if err := parseSignal(rest, r); err != nil {
			return nil, err
		}
	case 3:
		if len(rest) < 1 || len(rest) > 1+maxListLen {
			return nil, fail(exitUsage, "delete needs SUBDIR [BASEDIR...] (at most %d), got %d arguments", maxListLen, len(rest))
		}
		r.Op = opDelete
		r.SubDir = rest[0]
		r.BaseDirs = append([]string(nil), rest[1:]...)
	case 5:
		if len(rest) != 1 {
			return nil, fail(exitUsage, "list needs DIR, got %d arguments", len(rest))
		}
		r.Op = opList
		r.Dir = rest[0]
	case 4:
		dockerFile, err := parseLaunch("docker launch", "DOCKERFILE", rest, r)
		if err != nil {
			return nil, err
		}
		r.Op = opLaunchDocker
		r.DockerFile = dockerFile
	case 6:
		return nil, fail(exitUnsupported, "command %d (YARN sysfs) is not supported by the test cluster's container-executor", cmd)
	default:
		return nil, fail(exitUsage, "unknown command %d", cmd)
	}
	return r, nil
}

// checkArgShapes refuses an empty command line, or one with too many or too
// long arguments, or a NUL byte.
func checkArgShapes(args []string) error {
	if len(args) == 0 {
		return fail(exitUsage, "no operation given")
	}
	if len(args) > maxArgs {
		return fail(exitUsage, "%d arguments, more than %d", len(args), maxArgs)
	}
	for i, a := range args {
		if len(a) > maxArgBytes {
			return fail(exitUsage, "argument %d is %d bytes, more than %d", i+1, len(a), maxArgBytes)
		}
		if strings.IndexByte(a, 0) >= 0 {
			return fail(exitUsage, "argument %d contains a NUL byte", i+1)
		}
	}
	return nil
}

// parseOption reads an operation given as an option (--checksetup,
// --run-docker FILE, --module-gpu ...); others are not supported.
func parseOption(args []string) (*request, error) {
	if args[0] == "--checksetup" && len(args) == 1 {
		return &request{Op: opCheckSetup}, nil
	}
	if args[0] == "--run-docker" {
		if len(args) != 2 {
			return nil, fail(exitUsage, "--run-docker needs one docker command file, got %d arguments", len(args)-1)
		}
		return &request{Op: opRunDocker, DockerFile: args[1]}, nil
	}
	if args[0] == "--module-gpu" {
		return parseModuleGPU(args[1:])
	}
	return nil, fail(exitUnsupported, "operation %q is not supported by the test cluster's container-executor", clip(args[0]))
}

// parseSignal reads a signal request (command 2): PID SIGNAL.
func parseSignal(rest []string, r *request) error {
	if len(rest) != 2 {
		return fail(exitUsage, "signal needs PID SIGNAL, got %d arguments", len(rest))
	}
	r.Op = opSignal
	pid, err := strconv.Atoi(rest[0])
	if err != nil || pid <= 1 || len(rest[0]) > 10 {
		return fail(exitUsage, "pid %q is not a process id above 1", clip(rest[0]))
	}
	sig, err := strconv.Atoi(rest[1])
	if err != nil || sig < 0 || sig > 64 || len(rest[1]) > 2 {
		return fail(exitUsage, "signal %q is not a number from 0 to 64", clip(rest[1]))
	}
	r.PID, r.Signal = pid, sig
	return nil
}

// parseLaunch reads what a launch (command 1) and a docker launch (command 4)
// share: APPID CONTAINERID WORKDIR SCRIPT TOKENS --http PIDFILE LOCALDIRS
// LOGDIRS LAST [TCFILE], where LAST (lastName) is the resources or the
// docker command file, returned as it is. NodeManagers before Hadoop 3.3
// (no AM HTTPS) send the same without --http.
func parseLaunch(what, lastName string, rest []string, r *request) (last string, err error) {
	if len(rest) >= 6 && rest[5] == "--https" {
		return "", fail(exitUnsupported, "%s with --https (a container keystore) is not supported by the test cluster's container-executor", what)
	}
	if len(rest) >= 6 && rest[5] == "--http" {
		// Drop it: what follows is the pre-3.3 form.
		rest = append(append([]string{}, rest[:5]...), rest[6:]...)
	}
	if len(rest) == 10 {
		return "", fail(exitUnsupported, "traffic control (a tc command file) is not supported by the test cluster's container-executor")
	}
	if len(rest) != 9 {
		return "", fail(exitUsage, "%s needs APPID CONTAINERID WORKDIR SCRIPT TOKENS [--http] PIDFILE LOCALDIRS LOGDIRS %s, got %d arguments", what, lastName, len(rest))
	}
	r.AppID, r.ContainerID, r.WorkDir = rest[0], rest[1], rest[2]
	r.ScriptPath, r.TokensPath, r.PIDFile = rest[3], rest[4], rest[5]
	if r.LocalDirs, err = splitDirs("local", rest[6]); err != nil {
		return "", err
	}
	if r.LogDirs, err = splitDirs("log", rest[7]); err != nil {
		return "", err
	}
	return rest[8], nil
}

// splitDirs splits a '%'-separated directory list.
func splitDirs(what, s string) ([]string, error) {
	if s == "" {
		return nil, fail(exitUsage, "empty %s directory list", what)
	}
	parts := strings.Split(s, "%")
	if len(parts) > maxListLen {
		return nil, fail(exitUsage, "%d %s directories, more than %d", len(parts), what, maxListLen)
	}
	for _, p := range parts {
		if p == "" {
			return nil, fail(exitUsage, "an empty entry in the %s directory list", what)
		}
	}
	return parts, nil
}

// parseResources reads the launch's resources option: "cgroups=none" or
// "cgroups=FILE%FILE..." (the cgroups' tasks files the container joins; the
// NodeManager joins the files of several controllers with '%', older ones
// with ',').
func parseResources(s string) ([]string, error) {
	v, ok := strings.CutPrefix(s, "cgroups=")
	if !ok {
		return nil, fail(exitUsage, "resources option %q does not start with cgroups=", clip(s))
	}
	if v == "none" {
		return nil, nil
	}
	parts := strings.FieldsFunc(v, func(r rune) bool { return r == '%' || r == ',' })
	if len(parts) == 0 || strings.Contains(v, "%%") || strings.Contains(v, ",,") || strings.HasSuffix(v, "%") || strings.HasSuffix(v, ",") || strings.HasPrefix(v, "%") || strings.HasPrefix(v, ",") {
		return nil, fail(exitUsage, "an empty cgroup file in %q", clip(s))
	}
	if len(parts) > maxListLen {
		return nil, fail(exitUsage, "%d cgroup files, more than %d", len(parts), maxListLen)
	}
	for _, p := range parts {
		if p == "" {
			return nil, fail(exitUsage, "an empty cgroup file in %q", clip(s))
		}
	}
	return parts, nil
}

// clip shortens what we echo from the command line.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// maxGPUMinor bounds a GPU's minor number (/dev/nvidiaN, N < 256 with NVIDIA's driver).
const maxGPUMinor = 255

// parseModuleGPU reads YARN's GPU plugin's request for a container that runs on the host (not in
// a Docker image): --container_id CID [--excluded_gpus MINOR,MINOR...], the GPUs of the node the
// container was not given, which its devices cgroup must deny.
func parseModuleGPU(rest []string) (*request, error) {
	if (len(rest) != 2 && len(rest) != 4) || rest[0] != "--container_id" || (len(rest) == 4 && rest[2] != "--excluded_gpus") {
		return nil, fail(exitUsage, "--module-gpu needs --container_id CID [--excluded_gpus MINOR,...], got %q", clip(strings.Join(rest, " ")))
	}
	r := &request{Op: opModuleGPU, ContainerID: rest[1]}
	if len(rest) == 4 {
		for _, m := range strings.Split(rest[3], ",") {
			n, err := strconv.Atoi(m)
			if err != nil || n < 0 || n > maxGPUMinor || len(m) > 3 {
				return nil, fail(exitUsage, "--excluded_gpus: %q is not a GPU minor number (0 to %d)", clip(m), maxGPUMinor)
			}
			r.ExcludedGPUs = append(r.ExcludedGPUs, n)
		}
		if len(r.ExcludedGPUs) > maxListLen {
			return nil, fail(exitUsage, "--excluded_gpus names %d GPUs, more than %d", len(r.ExcludedGPUs), maxListLen)
		}
	}
	return r, nil
}
