// Command mkrelease is `make release VERSION=X.Y.Z`: it writes dist/ (see internal/release) from
// a clean checkout, and refuses in one line (exit 2, dist/ untouched) a missing or malformed
// version or a tree with uncommitted changes.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/release"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("mkrelease", flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("version", "", "the release's version, X.Y.Z or X.Y.Z-rcN")
	root := fs.String("root", ".", "the module's root directory (a git checkout)")
	out := fs.String("out", "dist", "the directory to write, replaced whole")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	req, err := request(*version, *root, *out)
	if err != nil {
		fmt.Fprintf(stderr, "make release: %v\n", err)
		return 2
	}
	req.Log = stderr
	if err := release.Build(context.Background(), req); err != nil {
		fmt.Fprintf(stderr, "make release: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "wrote %s (check it with: cd %s && sha256sum -c SHA256SUMS)\n", req.Out, req.Out)
	return 0
}

// request checks what the release is made from: the version, a tree without uncommitted changes
// (its version would be X.Y.Z-dirty, which nobody could build again), the commit's time.
func request(version, root, out string) (release.Request, error) {
	if err := release.CheckVersion(version); err != nil {
		return release.Request{}, err
	}
	status, err := git(root, "status", "--porcelain")
	if err != nil {
		return release.Request{}, err
	}
	if status != "" {
		first := strings.SplitN(status, "\n", 2)[0]
		return release.Request{}, fmt.Errorf("the tree has uncommitted changes (%s, ...), so this build would be %s-dirty: commit or stash them first", strings.TrimSpace(first), version)
	}
	commit, err := commitTime(root)
	if err != nil {
		return release.Request{}, err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return release.Request{}, err
	}
	return release.Request{Version: version, Root: root, Commit: commit, Out: abs, Arches: release.Arches}, nil
}

// commitTime is SOURCE_DATE_EPOCH when set, else the time of the commit checked out.
func commitTime(root string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		var err error
		if s, err = git(root, "log", "-1", "--format=%ct"); err != nil {
			return time.Time{}, err
		}
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not seconds since 1970: unset it or give a number", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}

func git(root string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s in %s: %v (make release runs in a git checkout)", strings.Join(args, " "), root, err)
	}
	return strings.TrimSpace(string(b)), nil
}
