package rendezvous

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Program is what a task's launcher runs: the program and its arguments,
// and the job's environment variables, byte for byte. It comes with the
// cluster spec rather than through YARN's launch context, where the
// NodeManager would rewrite {{ }}, <CPS> and <LOG_DIR> and its launch
// script would expand $, ` and \ in them: a launch context then holds only
// names tfyarn generates.
type Program struct {
	Argv []string
	Env  map[string]string
}

// Bounds on a Program from the wire; taskspec.MaxProgramBytes keeps a
// valid job's well inside them.
const (
	maxProgramBytes = 2 * taskspec.MaxProgramBytes
	maxProgramItems = 1 << 16
)

// wireProgram carries bytes as base64 (JSON's []byte): arguments need not
// be UTF-8.
type wireProgram struct {
	Argv [][]byte          `json:"argv"`
	Env  map[string][]byte `json:"env,omitempty"`
}

func (p Program) wire() *wireProgram {
	w := &wireProgram{Argv: make([][]byte, len(p.Argv))}
	for i, a := range p.Argv {
		w.Argv[i] = []byte(a)
	}
	if len(p.Env) > 0 {
		w.Env = make(map[string][]byte, len(p.Env))
		for k, v := range p.Env {
			w.Env[k] = []byte(v)
		}
	}
	return w
}

func (w *wireProgram) program() (Program, error) {
	if len(w.Argv) == 0 || len(w.Argv[0]) == 0 {
		return Program{}, errors.New("program: no command")
	}
	if len(w.Argv)+len(w.Env) > maxProgramItems {
		return Program{}, fmt.Errorf("program: %d arguments and variables, at most %d", len(w.Argv)+len(w.Env), maxProgramItems)
	}
	p := Program{Argv: make([]string, len(w.Argv))}
	n := 0
	for i, a := range w.Argv {
		if strings.IndexByte(string(a), 0) >= 0 {
			return Program{}, fmt.Errorf("program: argument %d holds a NUL byte", i)
		}
		p.Argv[i] = string(a)
		n += len(a)
	}
	if len(w.Env) > 0 {
		p.Env = make(map[string]string, len(w.Env))
	}
	for k, v := range w.Env {
		if !taskspec.ValidEnvName(k) {
			return Program{}, fmt.Errorf("program: environment variable name %q is invalid", k)
		}
		if strings.IndexByte(string(v), 0) >= 0 {
			return Program{}, fmt.Errorf("program: environment variable %s holds a NUL byte", k)
		}
		p.Env[k] = string(v)
		n += len(k) + len(v)
	}
	if n > maxProgramBytes {
		return Program{}, fmt.Errorf("program: %d bytes, at most %d", n, maxProgramBytes)
	}
	return p, nil
}

// TaskSpec is what a launcher gets once every cluster task registered: the
// cluster spec, and the program to run when the AM serves one (WithPrograms;
// --local launchers are given theirs directly).
type TaskSpec struct {
	Cluster taskspec.ClusterSpec
	Program *Program
}

// WithoutCredentials makes the server answer the credentials endpoint as
// an AM that serves none (404, ErrNotServed to the client): for a job whose
// AM never gets fresh credentials (no keytab), so that no launcher holds a
// long-poll open for them all its life; the launchers stop asking at once.
func WithoutCredentials() Option {
	return func(s *Server) { s.noCredentials = true }
}

// WithPrograms makes the server hand each launcher its program with the
// cluster spec; programs returns false for a task it has none for.
func WithPrograms(programs func(taskspec.TaskID) (Program, bool)) Option {
	return func(s *Server) { s.programs = programs }
}
