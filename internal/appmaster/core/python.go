package core

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// PythonFacts are what the machine knows of the job's Python environment.
type PythonFacts struct {
	// Links are its names in a container's working directory: the
	// environment's and, for a layered one, its layers'.
	Links []string
	// Base is the base interpreter a venv links to ("" unknown, or a conda
	// env).
	Base string
	// User is the job's user, whom the containers run as.
	User string
}

// diagFindDenied is the NodeManager's launch script failing to list a
// container's working directory: before the program starts it runs
// `find -L . -maxdepth 5 -ls` (yarn.nodemanager.log-container-debug-info.enabled,
// on by default) under `set -e`, and a symlink into a directory the
// container's user may not enter fails it, with only this in prelaunch.err.
// GNU find quotes the path by locale: ‘./env/bin/python3’, `./env/bin/python3' or './env/bin/python3'.
var diagFindDenied = regexp.MustCompile("find: [‘'`\"]\\./([^/’'`\"]+)/([^’'`\"]*)[’'`\"]: Permission denied")

// unreachable explains a container whose launch script could not follow
// one of the environment's links as the job's user: for a venv, its
// interpreter links to one in a directory closed to that user (a Python
// under /root, say). The path, the user, the node and the remedy.
func (p PythonFacts) unreachable(diagnostics, nodeID string) (string, bool) {
	for _, m := range diagFindDenied.FindAllStringSubmatch(diagnostics, -1) {
		if !slices.Contains(p.Links, m[1]) {
			continue
		}
		user := p.User
		if user == "" {
			user = "the job's user"
		}
		where := ""
		if host := hostOf(nodeID); host != "" {
			where = " on " + host
		}
		inEnv := m[2]
		target := "a path outside it"
		if p.Base != "" && strings.HasPrefix(path.Base(inEnv), "python") && path.Dir(inEnv) == "bin" {
			target = p.Base
		}
		return fmt.Sprintf("the job's Python environment links %s to %s, which user %s cannot reach%s (a directory on its path is closed to %s: permission denied); "+
			"make the environment from an interpreter every user can run, e.g. /usr/bin/python3 -m venv", inEnv, target, user, where, user), true
	}
	return "", false
}
