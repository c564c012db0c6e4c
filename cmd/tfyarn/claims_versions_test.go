package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/buildinfo"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestClaimsVersions: docs/versions.md's example line has the form tfyarn
// version prints, its JSON keys are the output's, a release build's
// -ldflags -X (the variable the docs name) sets the version, and the
// warning it shows is the one the client prints.
func TestClaimsVersions(t *testing.T) {
	shows := clustertest.DocSection(t, "## What `tfyarn version` shows")
	line := regexp.MustCompile(`(?m)^tfyarn v\S+ \(commit [0-9a-f]{12}, \S+; go\S+ \S+/\S+\)$`).FindString(shows)
	require.NotEmpty(t, line, "the example line")
	require.Regexp(t, `^tfyarn devel \(go\S+ \S+/\S+\)$`, buildinfo.Info{Version: "devel", GoVersion: "go1.26.11", Platform: "linux/amd64"}.String())

	var keys []string
	info := reflect.TypeFor[buildinfo.Info]()
	for i := range info.NumField() {
		keys = append(keys, "`"+strings.Split(info.Field(i).Tag.Get("json"), ",")[0]+"`")
	}
	require.Contains(t, oneLine(shows), "has the keys "+strings.Join(keys[:len(keys)-1], ", ")+" and "+keys[len(keys)-1]+".")

	flag := regexp.MustCompile(`-ldflags "-X (\S+)=X\.Y\.Z"`).FindStringSubmatch(shows)
	require.NotNil(t, flag, "the release build's flag")
	bin := filepath.Join(t.TempDir(), "tfyarn")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-X "+flag[1]+"=9.8.7", "-o", bin, "./cmd/tfyarn")
	build.Dir = clustertest.RepoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as clustertest.BuildTfyarn: its compiled packages are reused
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "version", "--output", "json").Output()
	require.NoError(t, err)
	var got buildinfo.Info
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.Equal(t, "v9.8.7", got.Version)

	other := clustertest.DocSection(t, "## A client of another version")
	warning := regexp.MustCompile(`(?m)^tfyarn: (the job's ApplicationMaster is tfyarn (\S+) \(this client is (\S+)\)): \.\.\.$`).FindStringSubmatch(other)
	require.NotNil(t, warning, "the example warning")
	require.True(t, strings.HasPrefix(buildinfo.Mismatch(warning[2], warning[3]), warning[1]+": "))
}
