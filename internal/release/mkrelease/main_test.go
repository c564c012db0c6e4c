package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// `make release` refuses, in one line with exit 2 and without touching dist/, a missing or
// malformed version and a tree with uncommitted changes.
func TestRefusesWithoutTouchingDist(t *testing.T) {
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(repo, "uncommitted"), []byte("x"), 0o644))
	dist := filepath.Join(repo, "dist")
	for version, want := range map[string]string{
		"":      "no version: run make release VERSION=X.Y.Z",
		"1.2":   `version "1.2" is not X.Y.Z`,
		"1.2.3": "so this build would be 1.2.3-dirty: commit or stash them first",
	} {
		var stderr bytes.Buffer
		code := run([]string{"-version", version, "-root", repo, "-out", dist}, &stderr)
		require.Equal(t, 2, code, version)
		require.Contains(t, stderr.String(), want)
		require.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
		_, err := os.Stat(dist)
		require.True(t, os.IsNotExist(err), "dist/ was made for %q", version)
	}
}
