package localrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tfyarn/tfyarn/internal/envpack"
	"github.com/tfyarn/tfyarn/internal/executor"
	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Staged is a shipping plan laid out on this machine: what Apply gives a run.
type Staged struct {
	// Dir is the tasks' working directory, holding a link to each file,
	// environment and source directory and each archive unpacked, under
	// its link name; "" (the current directory) when the job ships no
	// --files or --archives.
	Dir string
	// Python and Script are the plan's, resolved to local paths.
	Python, Script string
	// EnvDir is the environment's directory, PythonPath the local
	// directories first on PYTHONPATH (absolute).
	EnvDir     string
	PythonPath []string
}

// Stage lays the job's shipping plan, the one client ships to YARN, out
// for a local run, in a task's terms (names relative to its working
// directory): nothing is packed or copied, the
// environment and source directory are used where they are and archives are
// unpacked into a temporary directory. An environment must be a directory
// (YARN alone unpacks an archive of one). Remove the returned directory
// (Staged.Dir) with Cleanup.
func Stage(ctx context.Context, sh shipplan.Plan) (*Staged, error) {
	st := &Staged{}
	local := map[string]string{} // link → absolute local path
	needDir := false
	for _, it := range sh.Items {
		abs, err := filepath.Abs(it.Local)
		if err != nil {
			return nil, err
		}
		local[it.Link] = abs
		switch {
		case it.Link == sh.PythonEnv && !it.Kind.IsEnvDir():
			return nil, fmt.Errorf("env %s: give the environment's directory (archives are unpacked by YARN only)", it.Local)
		case it.Kind == shipplan.Archive, it.Kind == shipplan.File && it.Link != sh.Script():
			needDir = true
		}
	}
	if sh.PythonEnv != "" {
		st.EnvDir = local[sh.PythonEnv]
	}
	for _, l := range sh.PythonPath {
		st.PythonPath = append(st.PythonPath, local[l])
	}
	// resolve maps a name in the working directory to the local path its
	// first component links to.
	resolve := func(name string) string {
		first, rest, _ := strings.Cut(name, "/")
		if p, ok := local[first]; ok {
			return filepath.Join(p, filepath.FromSlash(rest))
		}
		return name
	}
	st.Python = sh.Command
	if strings.Contains(sh.Command, "/") && !filepath.IsAbs(sh.Command) {
		st.Python = resolve(sh.Command)
	}
	if sh.Script() != "" {
		st.Script = resolve(sh.Script())
	}
	if !needDir {
		return st, nil
	}
	dir, err := os.MkdirTemp("", "tfyarn-local-*")
	if err != nil {
		return nil, err
	}
	st.Dir = dir
	for _, it := range sh.Items {
		target := filepath.Join(dir, it.Link)
		if it.Kind == shipplan.Archive {
			err = envpack.Unpack(ctx, it.Local, target)
			if err != nil {
				err = fmt.Errorf("--archives %s: %w", it.Local, err)
			}
		} else {
			err = os.Symlink(local[it.Link], target)
		}
		if err != nil {
			st.Cleanup()
			return nil, err
		}
	}
	return st, nil
}

// Cleanup removes the temporary working directory, if any.
func (s *Staged) Cleanup() {
	if s != nil && s.Dir != "" {
		os.RemoveAll(s.Dir)
	}
}

// Apply sets job and opts up to run with s: the script and interpreter,
// the working directory, and the environment (the Python environment's
// bin first on PATH, the source directory first on PYTHONPATH).
func (s *Staged) Apply(job *taskspec.Job, opts *Options) {
	if s.Script != "" {
		job.Script = s.Script
		opts.Python = s.Python
	}
	opts.Dir = s.Dir
	if s.EnvDir != "" || len(s.PythonPath) > 0 {
		base := opts.Env
		if base == nil {
			base = os.Environ()
		}
		opts.Env = executor.PythonEnviron(base, s.EnvDir, s.PythonPath)
	}
}
