package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// configFile is where the configuration is read from; the build fixes it
// (-ldflags "-X main.configFile=..."), the caller cannot choose it.
var configFile = "/etc/tfyarn-testcluster/container-executor.cfg"

const maxConfigBytes = 64 << 10

// config is the helper's configuration: key=value lines, '#' comments.
type config struct {
	Group        string   // yarn.nodemanager.linux-container-executor.group: the NodeManager's group
	MinUID       int      // min.user.id (default 1000)
	Banned       []string // banned.users (root is always banned)
	AllowedUsers []string // allowed.system.users: below min.user.id yet allowed
	TestUsers    []string // test.users: when set, the only users (names, or prefixes ending in '*') a container may run as
	LocalDirs    []string // yarn.nodemanager.local-dirs: roots every local path must lie in
	LogDirs      []string // yarn.nodemanager.log-dirs: roots every log path must lie in
	CgroupDirs   []string // cgroups.dirs: the NodeManager's cgroup hierarchies a container may join

	// YARN's Docker runtime; without docker.binary the helper refuses every docker operation.
	DockerBinary            string   // docker.binary: the docker CLI (root's alone)
	DockerHost              string   // docker.host: unix:///path of the cluster's daemon socket
	DockerTrustedRegistries []string // docker.trusted.registries: the only registries images may come from ("library": Docker Hub's)
	DockerNetworks          []string // docker.allowed.networks: host and/or none
	DockerROMounts          []string // docker.allowed.ro-mounts: roots a read-only mount's source must lie in
	DockerRWMounts          []string // docker.allowed.rw-mounts: roots a read-write mount's source must lie in
	DockerCapabilities      []string // docker.allowed.capabilities
	DockerRuntimes          []string // docker.allowed.runtimes: OCI runtimes a run may name (the NodeManager's GPU plugin asks for nvidia)
}

// parseConfig reads the configuration text; every root must be absolute
// and clean.
func parseConfig(b []byte) (*config, error) {
	if len(b) > maxConfigBytes {
		return nil, fail(exitInvalidConfig, "configuration is %d bytes, more than %d", len(b), maxConfigBytes)
	}
	c := &config{MinUID: 1000}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxConfigBytes)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fail(exitInvalidConfig, "configuration line %d has no '='", n)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if seen[k] {
			return nil, fail(exitInvalidConfig, "configuration key %q is set twice", clip(k))
		}
		seen[k] = true
		switch k {
		case "yarn.nodemanager.linux-container-executor.group":
			c.Group = v
		case "min.user.id":
			id, err := strconv.Atoi(v)
			if err != nil || id < 1 {
				return nil, fail(exitInvalidConfig, "min.user.id %q is not a uid above 0", clip(v))
			}
			c.MinUID = id
		case "banned.users":
			c.Banned = splitList(v)
		case "allowed.system.users":
			c.AllowedUsers = splitList(v)
		case "test.users":
			c.TestUsers = splitList(v)
			for _, u := range c.TestUsers {
				if !userNamePattern.MatchString(strings.TrimSuffix(u, "*")) {
					return nil, fail(exitInvalidConfig, "test.users entry %q is not a user name or a name prefix ending in '*'", clip(u))
				}
			}
		case "yarn.nodemanager.local-dirs":
			c.LocalDirs = splitList(v)
		case "yarn.nodemanager.log-dirs":
			c.LogDirs = splitList(v)
		case "cgroups.dirs":
			c.CgroupDirs = splitList(v)
		case "docker.binary":
			c.DockerBinary = v
		case "docker.host":
			c.DockerHost = v
		case "docker.trusted.registries":
			c.DockerTrustedRegistries = splitList(v)
		case "docker.allowed.networks":
			c.DockerNetworks = splitList(v)
		case "docker.allowed.ro-mounts":
			c.DockerROMounts = splitList(v)
		case "docker.allowed.rw-mounts":
			c.DockerRWMounts = splitList(v)
		case "docker.allowed.capabilities":
			c.DockerCapabilities = splitList(v)
		case "docker.allowed.runtimes":
			c.DockerRuntimes = splitList(v)
		default:
			return nil, fail(exitInvalidConfig, "unknown configuration key %q", clip(k))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fail(exitInvalidConfig, "reading the configuration: %v", err)
	}
	if err := validateConfig(c); err != nil {
		return nil, err
	}
	return c, nil
}

// validateConfig checks what the configuration must name, and that every
// root is absolute and clean.
func validateConfig(c *config) error {
	if c.Group == "" {
		return fail(exitInvalidConfig, "configuration names no yarn.nodemanager.linux-container-executor.group")
	}
	if len(c.LocalDirs) == 0 || len(c.LogDirs) == 0 {
		return fail(exitInvalidConfig, "configuration needs yarn.nodemanager.local-dirs and yarn.nodemanager.log-dirs")
	}
	if c.DockerBinary != "" {
		if !filepath.IsAbs(c.DockerBinary) || filepath.Clean(c.DockerBinary) != c.DockerBinary {
			return fail(exitInvalidConfig, "docker.binary %q is not an absolute, clean path", clip(c.DockerBinary))
		}
		sock, ok := strings.CutPrefix(c.DockerHost, "unix://")
		if !ok || !filepath.IsAbs(sock) || filepath.Clean(sock) != sock {
			return fail(exitInvalidConfig, "docker.host %q is not unix:///ABSOLUTE/PATH (the cluster's own daemon)", clip(c.DockerHost))
		}
		for _, n := range c.DockerNetworks {
			if n != "host" && n != "none" {
				return fail(exitInvalidConfig, "docker.allowed.networks %q: only host and none (no container networks)", clip(n))
			}
		}
	}
	for _, list := range [][]string{c.LocalDirs, c.LogDirs, c.CgroupDirs, c.DockerROMounts, c.DockerRWMounts} {
		for _, d := range list {
			if !filepath.IsAbs(d) || filepath.Clean(d) != d || d == "/" {
				return fail(exitInvalidConfig, "configured directory %q is not an absolute, clean path below /", clip(d))
			}
		}
	}
	return nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// loadConfig reads configFile after checking that nobody but root could
// have written it: the file and every directory above it are root-owned and
// not writable by group or others.
func loadConfig() (*config, error) {
	if err := rootOnlyPath(configFile); err != nil {
		return nil, fail(exitInvalidConfig, "configuration %s: %v", configFile, err)
	}
	f, err := os.OpenFile(configFile, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fail(exitInvalidConfig, "configuration: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fail(exitInvalidConfig, "configuration: %v", err)
	}
	return parseConfig(b)
}

// rootOnlyPath checks that p and each directory above it is owned by root
// and writable by nobody else.
func rootOnlyPath(p string) error {
	if !filepath.IsAbs(p) {
		return errNotAbs
	}
	for cur := filepath.Clean(p); ; cur = filepath.Dir(cur) {
		st, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !ok {
			return errNoOwner
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return &pathError{cur, "is a symbolic link"}
		}
		if sys.Uid != 0 {
			return &pathError{cur, "is not owned by root"}
		}
		if st.Mode().Perm()&0o022 != 0 && st.Mode()&os.ModeSticky == 0 {
			return &pathError{cur, "is writable by group or others"}
		}
		if cur == "/" {
			return nil
		}
	}
}
