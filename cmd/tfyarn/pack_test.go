package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
)

// runEnvCLI is runCLI with the pack and cache commands present even before
// app.go lists them.
func runEnvCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	app := newApp(e)
	for _, add := range []*cli.Command{packCommand(e), cacheCommand(e)} {
		if app.Command(add.Name) == nil {
			app.Commands = append(app.Commands, add)
		}
	}
	err := app.RunContext(context.Background(), append([]string{"tfyarn"}, args...))
	code = exitOK
	if err != nil {
		var msg string
		msg, code = describe(err, e)
		if msg != "" {
			errb.WriteString("tfyarn: " + oneLine(msg) + "\n")
		}
	}
	return out.String(), errb.String(), code
}

func tinyVenv(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "venv")
	out, err := exec.Command("python3", "-m", "venv", "--without-pip", dir).CombinedOutput()
	require.NoError(t, err, string(out))
	return dir
}

func TestPackCommand(t *testing.T) {
	venv := tinyVenv(t)
	archive := filepath.Join(t.TempDir(), "env.tar.gz")
	stdout, stderr, code := runEnvCLI(t, "pack", venv, "-o", archive)
	require.Equal(t, exitOK, code, stderr)
	require.Empty(t, stderr)
	require.Contains(t, stdout, "Environment")
	require.Contains(t, stdout, ": venv "+venv+" (Python 3.")
	require.Contains(t, stdout, "Base interpreter")
	first, err := os.ReadFile(archive)
	require.NoError(t, err)

	stdout, stderr, code = runEnvCLI(t, "pack", "--output", "json", venv, "-o", archive)
	require.Equal(t, exitOK, code, stderr)
	var got struct {
		Archive string `json:"archive"`
		Kind    string `json:"kind"`
		SHA256  string `json:"sha256"`
		Bytes   int64  `json:"archive_bytes"`
		Files   int    `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Equal(t, archive, got.Archive)
	require.Equal(t, "venv", got.Kind)
	require.Len(t, got.SHA256, 64)
	second, err := os.ReadFile(archive)
	require.NoError(t, err)
	require.Equal(t, first, second, "same venv, same bytes")
	require.EqualValues(t, len(second), got.Bytes)

	// Nothing left beside the archive (temporary files are renamed or removed).
	ents, err := os.ReadDir(filepath.Dir(archive))
	require.NoError(t, err)
	require.Len(t, ents, 1)
}

func TestPackCommandErrors(t *testing.T) {
	notEnv := t.TempDir()
	out := filepath.Join(t.TempDir(), "x.tar.gz")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pack"}, "pack needs exactly one environment directory"},
		{[]string{"pack", notEnv, "-o", out}, "tfyarn: envpack: pack " + notEnv + ": not a Python environment: expected a venv (pyvenv.cfg) or a conda env (conda-meta/)"},
		{[]string{"pack", filepath.Join(notEnv, "nope"), "-o", out}, "is not a directory: expected a venv (pyvenv.cfg) or a conda env (conda-meta/)"},
		{[]string{"pack", notEnv, "-o", "json"}, "-o json names the archive to write; for the report format use --output json"},
		{[]string{"pack", notEnv, "--level", "11"}, "--level 11: expected 1 to 9"},
		{[]string{"pack", notEnv, "--output", "yaml"}, `--output "yaml": expected table or json`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runEnvCLI(t, tc.args...)
			require.Equal(t, exitUsage, code)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.want)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
	venv := tinyVenv(t)
	_, stderr, code := runEnvCLI(t, "pack", venv, "-o", filepath.Join(venv, "env.tar.gz"))
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "is inside the environment being packed; write the archive elsewhere")

	_, err := os.Stat(out)
	require.True(t, os.IsNotExist(err), "a failed pack leaves no archive")
	ents, err := os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	require.Empty(t, ents, "nor a temporary file")
}

func TestCacheUsageErrors(t *testing.T) {
	conf := deadConf(t) // usage errors come before connecting
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cache"}, "cache needs a command: list, clean, init or adopt"},
		{[]string{"cache", "init"}, "cache init needs one HDFS directory, e.g. tfyarn cache init /shared/tfyarn-cache"},
		{[]string{"cache", "init", "a", "b"}, "cache init needs one HDFS directory"},
		{[]string{"cache", "adopt"}, "cache adopt needs a shared cache directory or one entry of it, e.g. tfyarn cache adopt /shared/tfyarn-cache"},
		{[]string{"cache", "adopt", "a", "b"}, "cache adopt needs a shared cache directory or one entry of it"},
		{[]string{"cache", "frob"}, `unknown cache command "frob"`},
		{[]string{"cache", "clean"}, "cache clean needs --older-than (e.g. --older-than 30d)"},
		{[]string{"cache", "clean", "--older-than", "soon"}, `--older-than "soon": expected days like 30d or a duration like 12h`},
		{[]string{"cache", "clean", "--older-than", "-3d"}, `--older-than "-3d"`},
		{[]string{"cache", "list", "x"}, `cache list takes no arguments, got "x"`},
		{[]string{"cache", "list", "--output", "xml"}, `--output "xml": expected table or json`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runEnvCLI(t, append([]string{"--conf-dir", conf}, tc.args...)...)
			require.Equal(t, exitUsage, code)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.want)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
}

func TestParseCacheAge(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30d": 30 * 24 * time.Hour, "0d": 0, "1.5d": 36 * time.Hour, "12h": 12 * time.Hour, "90m": 90 * time.Minute, "0": 0,
	} {
		got, err := parseCacheAge(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "d", "30", "x3d", "-1h", "30days"} {
		_, err := parseCacheAge(in)
		require.Error(t, err, in)
	}
}

// TestPackLayersCLI: `tfyarn pack VENV --layers -o DIR` writes the layers
// `run --env VENV` ships, each under its cache name, and lists them; the
// same venv again gives the same digests; a conda env, an existing -o or
// no -o are refused (exit 2, nothing written).
func TestPackLayersCLI(t *testing.T) {
	venv := makeVenv(t)
	out := filepath.Join(t.TempDir(), "layers")
	stdout, stderr, code := runEnvCLI(t, "pack", venv, "--layers", "-o", out)
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `^venv `+regexp.QuoteMeta(venv)+` \(Python 3\.\d+\.\d+\): 2 layers in `+regexp.QuoteMeta(out)+`, `, stdout)
	require.Regexp(t, `(?m)^base +\d+ `, stdout)
	require.Regexp(t, `(?m)^group-00 +\d+ `, stdout)
	names, err := filepath.Glob(filepath.Join(out, "*"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(out, "env-layer.base.tar.gz"), filepath.Join(out, "env-layer.group-00.tar.gz")}, names)

	out2 := filepath.Join(t.TempDir(), "again")
	stdout2, stderr, code := runEnvCLI(t, "pack", venv, "--layers", "-o", out2, "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	var j struct {
		Layers []struct {
			Name    string `json:"name"`
			SHA256  string `json:"sha256"`
			Archive string `json:"archive"`
		} `json:"layers"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout2), &j))
	require.Len(t, j.Layers, 2)
	for _, l := range j.Layers {
		require.Contains(t, stdout, l.SHA256[:12], "the same venv, the same layers")
		require.FileExists(t, l.Archive)
	}

	for _, args := range [][]string{
		{"pack", venv, "--layers", "-o", out},
		{"pack", venv, "--layers"},
	} {
		stdout, stderr, code := runEnvCLI(t, args...)
		require.Equal(t, exitUsage, code, "%v: %s", args, stderr)
		require.Empty(t, stdout)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	}
	conda := filepath.Join(t.TempDir(), "conda")
	require.NoError(t, os.MkdirAll(filepath.Join(conda, "conda-meta"), 0o755))
	_, stderr, code = runEnvCLI(t, "pack", conda, "--layers", "-o", filepath.Join(t.TempDir(), "c"))
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "is not a venv (pyvenv.cfg): only a venv ships in layers")
}
