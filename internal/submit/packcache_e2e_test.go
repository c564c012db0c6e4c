//go:build e2e

package submit

import (
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/connect"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/procio"
	"github.com/tfyarn/tfyarn/internal/shipplan"
)

// Shipping an unchanged --env directory a second time neither packs nor
// reads it (the local pack cache knows its archive, the HDFS cache holds
// it); a file edited in place, even keeping its size and mtime, makes a new
// archive, and so does an ordinary edit. The same for --files.
//
//	go test -tags e2e -run E2EUnchangedEnvNotRepacked ./internal/submit/
func TestE2EUnchangedEnvNotRepacked(t *testing.T) {
	c := clustertest.Require(t)
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fs, err := connect.HDFS(ctx, conf, nil, hdfs.Options{User: ipc.DefaultUser()})
	require.NoError(t, err)
	defer fs.Close()

	venv := filepath.Join(t.TempDir(), "venv")
	out, err := exec.Command("python3", "-m", "venv", "--without-pip", venv).CombinedOutput()
	require.NoError(t, err, "%s", out)
	// 16 MiB of fresh random bytes: a new archive for the HDFS cache, and
	// enough that reading it would show.
	noise := make([]byte, 16<<20)
	_, err = rand.Read(noise)
	require.NoError(t, err)
	noisePath := filepath.Join(venv, "lib", "noise.bin")
	require.NoError(t, os.WriteFile(noisePath, noise, 0o644))
	data := filepath.Join(t.TempDir(), "data.bin")
	require.NoError(t, os.WriteFile(data, noise[:1<<20], 0o644))
	time.Sleep(1600 * time.Millisecond) // settled: remembered once packed

	var packs []PackInfo
	s := &Submission{job: Job{User: ipc.DefaultUser()}, cb: Callbacks{OnPacked: func(p PackInfo) { packs = append(packs, p) }}, FS: fs}
	plan, err := planShipping(Job{PythonEnv: venv, Files: []shipplan.LocalFile{{Path: data}}})
	require.NoError(t, err)
	ship := func() (map[string]hdfs.Resource, int64, PackInfo) {
		t.Helper()
		packs = nil
		res, n, err := s.ship(ctx, plan)
		require.NoError(t, err)
		require.Len(t, packs, 1)
		return res, n, packs[0]
	}

	first, n, p := ship()
	require.False(t, p.Cached)
	require.Positive(t, n)

	before := procio.Rchar(t)
	start := time.Now()
	again, n, p := ship()
	took, read := time.Since(start), procio.Rchar(t)-before
	require.True(t, p.Cached, "unchanged env recognised")
	require.Zero(t, n)
	require.Equal(t, first, again)
	// A venv ships in layers; the noise is outside site-packages: the base layer.
	require.True(t, strings.HasSuffix(first[shipplan.LayerLinkName(0)].Path, "/env-layer.base.tar.gz"), first[shipplan.LayerLinkName(0)].Path)
	require.Positive(t, p.Layers)
	require.Equal(t, "venv", p.Kind, "the manifest is known on a cached hit")
	require.Less(t, read, int64(256<<10), "bytes read on a cached hit (the env holds 16 MiB, the file 1 MiB)")
	t.Logf("cached hit: %v, %d bytes read", took, read)

	// Python writing bytecode into the env changes nothing that is packed.
	out, err = exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import json, email.message").CombinedOutput()
	require.NoError(t, err, "%s", out)
	_, _, p = ship()
	require.True(t, p.Cached, "bytecode is not packed")

	// Same size, same mtime, different bytes: ctime still moved.
	st, err := os.Stat(noisePath)
	require.NoError(t, err)
	noise[0] ^= 0xff
	require.NoError(t, os.WriteFile(noisePath, noise, 0o644))
	require.NoError(t, os.Chtimes(noisePath, st.ModTime(), st.ModTime()))
	time.Sleep(1600 * time.Millisecond)
	edited, n, p := ship()
	require.False(t, p.Cached)
	require.Positive(t, n)
	require.NotEqual(t, first[shipplan.LayerLinkName(0)].Path, edited[shipplan.LayerLinkName(0)].Path, "a new archive")

	// An ordinary edit (content and mtime), and the file shipped as is.
	noise[1] ^= 0xff
	require.NoError(t, os.WriteFile(noisePath, noise, 0o644))
	require.NoError(t, os.WriteFile(data, noise[:1<<20], 0o644))
	third, _, p := ship()
	require.False(t, p.Cached)
	require.NotEqual(t, edited[shipplan.LayerLinkName(0)].Path, third[shipplan.LayerLinkName(0)].Path)
	require.NotEqual(t, first["data.bin"].Path, third["data.bin"].Path)
}
