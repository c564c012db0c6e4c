//go:build e2e

package main

import (
	"os"
	"path"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// TestE2EAttackCheckpoints: alice's checkpoints are hers. A job that saves one leaves a 0700
// directory bob can neither list nor read from, and its file 0600; and a --checkpoint=DIR
// that bob made for her (open to all, even) is refused in one line, exit 2, before anything
// is submitted: her model never lands where bob could read or replace it.
func TestE2EAttackCheckpoints(t *testing.T) {
	t.Parallel()
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	_, alice, bob := simpleAttackUsers(t, c)
	id := randomHex(t)

	stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, alice.Env, "run", "--checkpoint", "--name", "e2e-attack-ckpt",
		"--worker", "1c,256m", "--output", "json", "--", "sh", "-c", `echo "the weights `+id+`" > "$TFYARN_CHECKPOINT_DIR/model"`)
	t.Logf("alice: %s\n%s", stdout, stderr)
	require.Equal(t, exitOK, code, stderr)
	appID := runJSON(t, stdout).AppID
	dir := path.Join(hdfs.CheckpointsDir(alice.Name), "e2e-attack-ckpt", "worker-0")
	ac := alice.HDFS(t)
	ids, err := ac.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ids, 1, "the job's exit saved one checkpoint")
	require.Contains(t, ids[0].Name(), appID)
	file := path.Join(dir, ids[0].Name(), "model")
	for p, mode := range map[string]os.FileMode{path.Dir(dir): 0o700, dir: 0o700, path.Dir(file): 0o700, file: 0o600} {
		fi, err := ac.Stat(p)
		require.NoError(t, err)
		require.Equal(t, mode, fi.Mode().Perm(), p)
	}
	bc := bob.HDFS(t)
	for _, d := range []string{path.Dir(dir), dir} {
		_, err := bc.ReadDir(d)
		require.ErrorIs(t, err, os.ErrPermission, "bob lists %s", d)
	}
	_, err = bc.ReadFile(file)
	require.ErrorIs(t, err, os.ErrPermission, "bob reads %s", file)

	trap := "/tmp/e2e-attack-ckpt-" + id
	require.NoError(t, bc.MkdirAll(trap, 0o777))
	require.NoError(t, bc.Chmod(trap, 0o777))
	t.Cleanup(func() { _ = bc.RemoveAll(trap) })
	stdout, stderr, code = execTfyarnFor(t, c, bin, time.Minute, alice.Env, "run", "--checkpoint="+trap,
		"--worker", "1c,256m", "--", "true")
	require.Equal(t, exitUsage, code, stderr)
	require.Empty(t, stdout)
	require.Equal(t, "tfyarn: --checkpoint "+trap+": "+trap+" is owned by "+bob.Name+", not by "+alice.Name+": name a directory of your own\n", stderr)
}
