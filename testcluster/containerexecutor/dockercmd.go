package main

import (
	"bufio"
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The NodeManager's Docker runtime (DockerLinuxContainerRuntime) writes each
// docker command into a file in its private directory of the container
// (nmPrivate/APPID/CONTAINERID/docker.*.cmd):
//
//	[docker-command-execution]
//	  docker-command=run
//	  name=container_...
//	  mounts=/src:/dst:ro,/src2:/dst2:rw
//	  ...
//
// one key a line, a key's values joined by ','. This file reads such a file
// and decides, against the helper's configuration, which docker command line
// it may become; nothing the file says is run as it is.

const (
	maxDockerFileBytes = 256 << 10
	maxDockerLines     = 256
	maxDockerValues    = 256 // values of one key (mounts, capabilities, groups)
	maxEnvFileBytes    = 4 << 20
	maxEnvLines        = 4096
)

// dockerCommand is one parsed command file.
type dockerCommand struct {
	Command string              // docker-command: run, inspect, stop, kill, rm, start
	Args    map[string][]string // every other key
}

var (
	dockerKeyPattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)
	envNamePattern   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,255}$`)
	hostnamePattern  = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$`)
	// A Docker image reference: [REGISTRY[:PORT]/]PATH[:TAG][@sha256:DIGEST].
	imagePattern  = regexp.MustCompile(`^(?:([a-z0-9]+(?:[.-][a-z0-9]+)*(?::[0-9]{1,5})?)/)?([a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`)
	dockerSignals = []string{"HUP", "INT", "QUIT", "KILL", "USR1", "USR2", "TERM", "CONT", "STOP",
		"SIGHUP", "SIGINT", "SIGQUIT", "SIGKILL", "SIGUSR1", "SIGUSR2", "SIGTERM", "SIGCONT", "SIGSTOP"}
	// The formats the NodeManager inspects a container with.
	inspectFormats = []string{
		"{{.State.Status}}",
		"{{.State.Status}},{{.Config.StopSignal}}",
		"{{range(.NetworkSettings.Networks)}}{{.IPAddress}},{{end}}{{.Config.Hostname}}",
		"{{json .NetworkSettings.Ports}}",
	}
)

// parseDockerCommand reads a command file's text; it checks shapes only.
func parseDockerCommand(b []byte) (*dockerCommand, error) {
	if len(b) > maxDockerFileBytes {
		return nil, fail(exitInvalidDocker, "docker command file is %d bytes, more than %d", len(b), maxDockerFileBytes)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return nil, fail(exitInvalidDocker, "docker command file contains a NUL byte")
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxDockerFileBytes)
	d := &dockerCommand{Args: map[string][]string{}}
	header := false
	n := 0
	for sc.Scan() {
		n++
		if n > maxDockerLines {
			return nil, fail(exitInvalidDocker, "docker command file has more than %d lines", maxDockerLines)
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if !header {
			if line != "[docker-command-execution]" {
				return nil, fail(exitInvalidDocker, "docker command file does not start with [docker-command-execution]")
			}
			header = true
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fail(exitInvalidDocker, "docker command file line %d has no '='", n)
		}
		if !dockerKeyPattern.MatchString(k) {
			return nil, fail(exitInvalidDocker, "docker command file line %d: malformed key %q", n, clip(k))
		}
		if _, dup := d.Args[k]; dup || (k == "docker-command" && d.Command != "") {
			return nil, fail(exitInvalidDocker, "docker command file sets %s twice", k)
		}
		if k == "docker-command" {
			d.Command = v
			continue
		}
		vs := strings.Split(v, ",")
		if len(vs) > maxDockerValues {
			return nil, fail(exitInvalidDocker, "docker command file: %s has %d values, more than %d", k, len(vs), maxDockerValues)
		}
		d.Args[k] = vs
	}
	if err := sc.Err(); err != nil {
		return nil, fail(exitInvalidDocker, "reading the docker command file: %v", err)
	}
	if !header {
		return nil, fail(exitInvalidDocker, "docker command file is empty")
	}
	switch d.Command {
	case "run", "inspect", "stop", "kill", "rm", "start":
	case "":
		return nil, fail(exitInvalidDocker, "docker command file names no docker-command")
	default:
		return nil, fail(exitUnsupported, "docker command %q is not supported by the test cluster's container-executor (only run, inspect, stop, kill, rm, start)", clip(d.Command))
	}
	return d, nil
}

// one returns the single value of key, or "" when absent.
func (d *dockerCommand) one(key string) (string, error) {
	vs, ok := d.Args[key]
	if !ok {
		return "", nil
	}
	if len(vs) != 1 {
		return "", fail(exitInvalidDocker, "docker %s: %s has %d values, want one", d.Command, key, len(vs))
	}
	return vs[0], nil
}

// onlyKeys refuses every key of d not in allowed.
func (d *dockerCommand) onlyKeys(allowed ...string) error {
	keys := make([]string, 0, len(d.Args))
	for k := range d.Args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return fail(exitInvalidDocker, "docker %s with %s is not allowed by the test cluster's container-executor", d.Command, k)
		}
	}
	return nil
}

// checkImage accepts a well-formed image reference from a trusted registry.
func checkImage(c *config, image string) error {
	m := imagePattern.FindStringSubmatch(image)
	if m == nil || len(image) > 255 {
		return fail(exitInvalidDocker, "docker image name %q is not a valid image reference", clip(image))
	}
	registry := m[1]
	if registry != "" && !strings.ContainsAny(registry, ".:") && registry != "localhost" {
		registry = "" // "user/image" on Docker Hub: the first part is no registry
	}
	if registry == "" {
		registry = "library"
	}
	if !slices.Contains(c.DockerTrustedRegistries, registry) {
		return fail(exitInvalidDocker, "docker image %s is from registry %s, which is not among the cluster's trusted registries (%s)", clip(image), registry, strings.Join(c.DockerTrustedRegistries, ","))
	}
	return nil
}

// dockerMount is one validated bind mount.
type dockerMount struct {
	Src, Dst string
	ReadOnly bool
}

// parseMount reads SRC:DST:MODE, MODE ro or rw with an optional
// +PROPAGATION the test cluster ignores (always private).
func parseMount(s string) (dockerMount, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return dockerMount{}, fail(exitInvalidDocker, "docker mount %q is not SRC:DST:MODE", clip(s))
	}
	m := dockerMount{Src: parts[0], Dst: parts[1]}
	mode, _, _ := strings.Cut(parts[2], "+")
	switch mode {
	case "ro":
		m.ReadOnly = true
	case "rw":
	default:
		return dockerMount{}, fail(exitInvalidDocker, "docker mount %q: mode %q is neither ro nor rw", clip(s), clip(parts[2]))
	}
	for _, p := range []string{m.Src, m.Dst} {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			return dockerMount{}, fail(exitInvalidDocker, "docker mount %q: %q is not an absolute, clean path below /", clip(s), clip(p))
		}
	}
	for _, sys := range []string{"/proc", "/sys", "/dev"} {
		if under(m.Dst, sys) {
			return dockerMount{}, fail(exitInvalidDocker, "docker mount %q: a mount onto %s is not allowed", clip(s), sys)
		}
	}
	return m, nil
}

// checkMountSource accepts src (already resolved, no links) below one of the
// allowed read-write roots, or below a read-only root when the mount is
// read-only.
func checkMountSource(c *config, m dockerMount, resolved string) error {
	roots := c.DockerRWMounts
	if m.ReadOnly {
		roots = append(append([]string(nil), c.DockerROMounts...), c.DockerRWMounts...)
	}
	for _, r := range roots {
		if under(resolved, r) {
			return nil
		}
	}
	how := "read-write"
	if m.ReadOnly {
		how = "read-only"
	}
	return fail(exitInvalidDocker, "docker mount of %s is not allowed %s by the cluster (docker.allowed.ro-mounts, docker.allowed.rw-mounts)", clip(m.Src), how)
}

// parseEnvFile checks the NodeManager's environment file for docker run:
// NAME=VALUE lines only (docker reads a bare NAME from its own environment).
func parseEnvFile(b []byte) error {
	if len(b) > maxEnvFileBytes {
		return fail(exitInvalidDocker, "docker environment file is %d bytes, more than %d", len(b), maxEnvFileBytes)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return fail(exitInvalidDocker, "docker environment file contains a NUL byte")
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) > maxEnvLines {
		return fail(exitInvalidDocker, "docker environment file has more than %d lines", maxEnvLines)
	}
	for i, l := range lines {
		if l == "" && len(lines) == 1 {
			break
		}
		k, _, ok := strings.Cut(l, "=")
		if !ok || !envNamePattern.MatchString(k) {
			return fail(exitInvalidDocker, "docker environment file line %d is not NAME=VALUE", i+1)
		}
	}
	return nil
}

// runSpec is what a validated docker run becomes.
type runSpec struct {
	Name       string
	Image      string
	User       string // UID:GID
	GroupAdd   []string
	Net        string
	WorkDir    string
	CapAdd     []string
	Mounts     []dockerMount
	EnvFile    string
	CgroupPrnt string
	Runtime    string // an OCI runtime of docker.allowed.runtimes (the GPU plugin's nvidia), or Docker's default
	Command    []string
}

// checkRun validates a docker run of launch request r for account a; resolve
// turns a mount source into its path without links (the real one reads the
// filesystem).
func checkRun(c *config, d *dockerCommand, r *request, a *account, resolve func(string) (string, error)) (*runSpec, error) {
	if err := d.onlyKeys("name", "user", "image", "net", "workdir", "hostname", "launch-command", "detach",
		"rm", "cap-drop", "cap-add", "group-add", "mounts", "environ", "cgroup-parent", "privileged", "log-dir",
		"use-entry-point", "runtime"); err != nil {
		return nil, err
	}
	s, o, err := readRun(d)
	if err != nil {
		return nil, err
	}
	if err := checkRunIdentity(c, d, r, a, s); err != nil {
		return nil, err
	}
	if err := checkRunOptions(c, d, s, o); err != nil {
		return nil, err
	}
	if err := checkRunMounts(c, d, s, resolve); err != nil {
		return nil, err
	}
	if err := checkRunPaths(c, r, s, o.logDir); err != nil {
		return nil, err
	}
	s.Command = d.Args["launch-command"]
	if !slices.Equal(s.Command, []string{"bash", r.WorkDir + "/launch_container.sh"}) {
		return nil, fail(exitInvalidDocker, "docker run's command %q is not bash WORKDIR/launch_container.sh", clip(strings.Join(s.Command, " ")))
	}
	return s, nil
}

// runOptions are a docker run's single-valued keys that the run spec does
// not keep: checkRun only checks them.
type runOptions struct {
	hostname, detach, privileged, entry, rm, logDir string
}

// readRun reads a docker run's single-valued keys, each once, the required
// ones not empty.
func readRun(d *dockerCommand) (*runSpec, runOptions, error) {
	s := &runSpec{}
	var o runOptions
	var err error
	get := func(key string, required bool) string {
		if err != nil {
			return ""
		}
		var v string
		if v, err = d.one(key); err == nil && required && v == "" {
			err = fail(exitInvalidDocker, "docker run needs %s", key)
		}
		return v
	}
	s.Name = get("name", true)
	s.Image = get("image", true)
	s.User = get("user", true)
	s.Net = get("net", true)
	s.WorkDir = get("workdir", true)
	o.hostname = get("hostname", false)
	o.detach = get("detach", false)
	o.privileged = get("privileged", false)
	o.entry = get("use-entry-point", false)
	o.rm = get("rm", false)
	s.EnvFile = get("environ", false)
	s.CgroupPrnt = get("cgroup-parent", false)
	s.Runtime = get("runtime", false)
	o.logDir = get("log-dir", false)
	if err != nil {
		return nil, runOptions{}, err
	}
	return s, o, nil
}

// checkRunIdentity checks what the container is and runs as: its name (the
// launched container's), its image, its user and groups (the account's), its
// network and working directory.
func checkRunIdentity(c *config, d *dockerCommand, r *request, a *account, s *runSpec) error {
	if s.Name != r.ContainerID {
		return fail(exitInvalidDocker, "docker run names container %q, not the launched %s", clip(s.Name), r.ContainerID)
	}
	if err := checkImage(c, s.Image); err != nil {
		return err
	}
	if s.User != strconv.Itoa(a.UID)+":"+strconv.Itoa(a.GID) {
		return fail(exitInvalidDocker, "docker run as %q, not as user %s (%d:%d)", clip(s.User), a.Name, a.UID, a.GID)
	}
	for _, g := range d.Args["group-add"] {
		id, err := strconv.Atoi(g)
		if err != nil || (id != a.GID && !slices.Contains(a.Groups, id)) {
			return fail(exitInvalidDocker, "docker run adds group %q, which is not one of user %s's groups", clip(g), a.Name)
		}
		s.GroupAdd = append(s.GroupAdd, g)
	}
	if !slices.Contains(c.DockerNetworks, s.Net) {
		return fail(exitInvalidDocker, "docker network %q is not allowed by the cluster (allowed: %s)", clip(s.Net), strings.Join(c.DockerNetworks, ","))
	}
	if s.WorkDir != r.WorkDir {
		return fail(exitInvalidDocker, "docker run's working directory %q is not the container's %s", clip(s.WorkDir), r.WorkDir)
	}
	return nil
}

// checkRunOptions checks how the container runs: hostname, detached,
// removal, no privileges or entry point, an allowed runtime, every
// capability dropped but the allowed ones.
func checkRunOptions(c *config, d *dockerCommand, s *runSpec, o runOptions) error {
	if o.hostname != "" && !hostnamePattern.MatchString(o.hostname) {
		return fail(exitInvalidDocker, "docker run's hostname %q is malformed", clip(o.hostname))
	}
	if o.detach != "" && o.detach != "true" {
		return fail(exitInvalidDocker, "docker run must be detached")
	}
	if o.rm != "" && o.rm != "true" && o.rm != "false" {
		return fail(exitInvalidDocker, "docker run's rm %q is neither true nor false", clip(o.rm))
	}
	if o.privileged != "" && o.privileged != "false" {
		return fail(exitInvalidDocker, "privileged docker containers are not allowed by the cluster")
	}
	if o.entry != "" && o.entry != "false" {
		return fail(exitInvalidDocker, "docker run with the image's entry point is not allowed by the test cluster's container-executor")
	}
	if s.Runtime != "" && !slices.Contains(c.DockerRuntimes, s.Runtime) {
		return fail(exitInvalidDocker, "docker runtime %q is not allowed by the cluster (docker.allowed.runtimes: %s)", clip(s.Runtime), strings.Join(c.DockerRuntimes, ","))
	}
	if drop := d.Args["cap-drop"]; drop != nil && !slices.Equal(drop, []string{"ALL"}) {
		return fail(exitInvalidDocker, "docker run's cap-drop %q is not ALL", clip(strings.Join(drop, ",")))
	}
	for _, cp := range d.Args["cap-add"] {
		if !slices.Contains(c.DockerCapabilities, cp) {
			return fail(exitInvalidDocker, "capability %q is not allowed by the cluster (docker.allowed.capabilities)", clip(cp))
		}
		s.CapAdd = append(s.CapAdd, cp)
	}
	return nil
}

// checkRunMounts checks the run's bind mounts, each source resolved (resolve)
// and allowed by the cluster.
func checkRunMounts(c *config, d *dockerCommand, s *runSpec, resolve func(string) (string, error)) error {
	mounts, ok := d.Args["mounts"]
	if !ok {
		return nil
	}
	for _, ms := range mounts {
		m, err := parseMount(ms)
		if err != nil {
			return err
		}
		resolved, err := resolve(m.Src)
		if err != nil {
			return fail(exitInvalidDocker, "docker mount source %s: %v", clip(m.Src), err)
		}
		if err := checkMountSource(c, m, resolved); err != nil {
			return err
		}
		m.Src = resolved
		s.Mounts = append(s.Mounts, m)
	}
	return nil
}

// checkRunPaths checks the run's environment file (in the NodeManager's
// private directory of the container), log directory and cgroup parent
// (the cluster's hierarchy).
func checkRunPaths(c *config, r *request, s *runSpec, logDir string) error {
	private := "/nmPrivate/" + r.AppID + "/" + r.ContainerID
	if s.EnvFile != "" {
		if _, err := checkPath(s.EnvFile, c.LocalDirs); err != nil {
			return err
		}
		if !strings.HasSuffix(filepath.Dir(s.EnvFile), private) {
			return fail(exitInvalidPath, "docker environment file %s is not in the NodeManager's private directory of %s", clip(s.EnvFile), r.ContainerID)
		}
	}
	if logDir != "" {
		if _, err := checkPath(logDir, c.LogDirs); err != nil {
			return err
		}
	}
	if s.CgroupPrnt != "" {
		ok := false
		for _, h := range c.CgroupDirs {
			if s.CgroupPrnt == "/"+filepath.Base(h)+"/"+r.ContainerID || s.CgroupPrnt == "/"+filepath.Base(h) {
				ok = true
			}
		}
		if !ok {
			return fail(exitInvalidDocker, "docker cgroup parent %q is not the cluster's hierarchy", clip(s.CgroupPrnt))
		}
	}
	return nil
}

// runArgv is the docker CLI's command line for s (after the global options).
func (s *runSpec) argv() []string {
	a := []string{"run", "--detach", "--pull=never", "--name", s.Name, "--user", s.User,
		"--workdir", s.WorkDir, "--network", s.Net, "--cap-drop", "ALL",
		"--security-opt", "no-new-privileges"}
	for _, g := range s.GroupAdd {
		a = append(a, "--group-add", g)
	}
	for _, cp := range s.CapAdd {
		a = append(a, "--cap-add", cp)
	}
	for _, m := range s.Mounts {
		// Neither path holds ':' or ',' (the command file's separators).
		mode := "rw"
		if m.ReadOnly {
			mode = "ro"
		}
		a = append(a, "--volume", m.Src+":"+m.Dst+":"+mode+",rprivate")
	}
	if s.EnvFile != "" {
		a = append(a, "--env-file", s.EnvFile)
	}
	if s.CgroupPrnt != "" {
		a = append(a, "--cgroup-parent", s.CgroupPrnt)
	}
	if s.Runtime != "" {
		a = append(a, "--runtime", s.Runtime)
	}
	a = append(a, "--", s.Image)
	return append(a, s.Command...)
}

// checkControl validates a docker command other than run (what the
// NodeManager runs through --run-docker) and returns the docker CLI's
// command line for it.
func checkControl(d *dockerCommand) ([]string, error) {
	name, err := d.one("name")
	if err != nil {
		return nil, err
	}
	if !containerIDPattern.MatchString(name) {
		return nil, fail(exitInvalidDocker, "docker %s: container name %q is not a YARN container id", d.Command, clip(name))
	}
	switch d.Command {
	case "inspect":
		if err := d.onlyKeys("name", "format"); err != nil {
			return nil, err
		}
		f := strings.Join(d.Args["format"], ",")
		if !slices.Contains(inspectFormats, f) {
			return nil, fail(exitInvalidDocker, "docker inspect format %q is not one the NodeManager uses", clip(f))
		}
		return []string{"inspect", "--format=" + f, "--", name}, nil
	case "stop":
		if err := d.onlyKeys("name", "time"); err != nil {
			return nil, err
		}
		t, err := d.one("time")
		if err != nil {
			return nil, err
		}
		a := []string{"stop"}
		if t != "" {
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n > 3600 || len(t) > 4 {
				return nil, fail(exitInvalidDocker, "docker stop time %q is not 0 to 3600 seconds", clip(t))
			}
			a = append(a, "--time", t)
		}
		return append(a, "--", name), nil
	case "kill":
		if err := d.onlyKeys("name", "signal"); err != nil {
			return nil, err
		}
		sig, err := d.one("signal")
		if err != nil {
			return nil, err
		}
		a := []string{"kill"}
		if sig != "" {
			if !slices.Contains(dockerSignals, sig) {
				return nil, fail(exitInvalidDocker, "docker kill signal %q is not allowed", clip(sig))
			}
			a = append(a, "--signal", sig)
		}
		return append(a, "--", name), nil
	case "rm":
		// hierarchy: the cgroup hierarchy Hadoop's helper cleans; Docker removes its own.
		if err := d.onlyKeys("name", "hierarchy"); err != nil {
			return nil, err
		}
		return []string{"rm", "--force", "--", name}, nil
	case "start":
		if err := d.onlyKeys("name"); err != nil {
			return nil, err
		}
		return []string{"start", "--", name}, nil
	}
	return nil, fail(exitUnsupported, "docker command %q is not supported here", clip(d.Command))
}
