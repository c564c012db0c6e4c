// Package transcript runs transcript tests in the style of etcd-io/raft's
// datadriven tests: a text file of commands, each followed by "----" and
// the output it must produce, ended by a blank line. Lines starting with
// '#' and blank lines between cases are kept as they are.
//
//	# the chief decides
//	exit chief:0 0
//	----
//	stop ps:0 graceful: no longer needed
//
// Run a test with -rewrite to write the actual outputs into the files
// instead of comparing them (then review the diff).
package transcript

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the transcript files with the actual outputs")

// Cmd is one command of a transcript: its name, positional arguments and
// key=value arguments, as the command line spelled them.
type Cmd struct {
	Pos  string // file:line, for messages
	Line string
	Name string
	Args []string          // positional, in order
	KV   map[string]string // key=value arguments
}

// Get returns the value of key=value, or def.
func (c Cmd) Get(key, def string) string {
	if v, ok := c.KV[key]; ok {
		return v
	}
	return def
}

// Case is one command with its expected output.
type Case struct {
	Cmd  Cmd
	Want string
	// pre are the comment and blank lines before it, kept for a rewrite.
	pre []string
}

// File is a parsed transcript.
type File struct {
	Path  string
	Cases []Case
	tail  []string // comments after the last case
}

// Parse reads a transcript.
func Parse(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := &File{Path: path}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var pre []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			pre = append(pre, line)
			continue
		}
		c := Case{Cmd: parseCmd(fmt.Sprintf("%s:%d", path, i+1), line), pre: pre}
		pre = nil
		if i+1 >= len(lines) || lines[i+1] != "----" {
			return nil, fmt.Errorf("%s:%d: %q is not followed by ----", path, i+1, line)
		}
		i += 2
		var out []string
		for ; i < len(lines) && lines[i] != ""; i++ {
			out = append(out, lines[i])
		}
		c.Want = strings.Join(out, "\n")
		f.Cases = append(f.Cases, c)
	}
	f.tail = pre
	return f, nil
}

func parseCmd(pos, line string) Cmd {
	c := Cmd{Pos: pos, Line: line, KV: map[string]string{}}
	fields := strings.Fields(line)
	c.Name = fields[0]
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			c.KV[k] = v
		} else {
			c.Args = append(c.Args, f)
		}
	}
	return c
}

// HasComment reports whether a comment line of the file starts with
// prefix (how a file marks itself, e.g. "# yarn only").
func (f *File) HasComment(prefix string) bool {
	for _, c := range f.Cases {
		for _, l := range c.pre {
			if strings.HasPrefix(l, prefix) {
				return true
			}
		}
	}
	for _, l := range f.tail {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// Format writes the file back with the given outputs.
func (f *File) Format(outputs []string) string {
	var b strings.Builder
	for i, c := range f.Cases {
		for _, l := range c.pre {
			b.WriteString(l + "\n")
		}
		b.WriteString(c.Cmd.Line + "\n----\n")
		if outputs[i] != "" {
			b.WriteString(outputs[i] + "\n")
		}
		b.WriteString("\n")
	}
	for _, l := range f.tail {
		b.WriteString(l + "\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// Run runs every case of the file at path through do, in order, and
// compares its output with the expected one; with -rewrite it writes the
// outputs into the file instead.
func Run(t *testing.T, path string, do func(t *testing.T, c Cmd) string) {
	t.Helper()
	f, err := Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	outputs := make([]string, len(f.Cases))
	for i, c := range f.Cases {
		got := strings.TrimRight(do(t, c.Cmd), "\n")
		outputs[i] = got
		if !*rewrite && got != c.Want {
			t.Fatalf("%s: %s\n got:\n%s\nwant:\n%s", c.Cmd.Pos, c.Cmd.Line, indent(got), indent(c.Want))
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(f.Format(outputs)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Files returns the transcripts matching pattern, failing the test when
// there are none (a glob that matches nothing tests nothing).
func Files(t *testing.T, pattern string) []string {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no transcripts match %s (%v)", pattern, err)
	}
	return paths
}

func indent(s string) string {
	if s == "" {
		return "    (nothing)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
