package envpack

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A link back into its own ancestry, or a cycle of links, is refused by the
// check and by both packers, naming the link; links elsewhere in the
// environment (lib64 → lib, bin/python → an outside interpreter, a
// dangling one) are not loops.
func TestLinkLoopsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, link, target string
		cycle              bool
	}{
		{"parent", "lib/sub/up", "..", false},
		{"self", "lib/sub/me", ".", false},
		{"root absolute", "lib/sub/root", "ROOT", false},
		{"cycle", "lib/a", "b", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			venv := filepath.Join(t.TempDir(), "venv")
			writeFile(t, filepath.Join(venv, "pyvenv.cfg"), "home = /usr/bin\nversion = 3.11.2\n", 0o644)
			require.NoError(t, os.MkdirAll(filepath.Join(venv, "lib", "sub"), 0o755))
			require.NoError(t, os.Symlink("lib", filepath.Join(venv, "lib64")))
			require.NoError(t, os.Symlink("/nonexistent/python3", filepath.Join(venv, "lib", "dangling")))
			require.NoError(t, CheckEnvLinks(venv), "no loop yet")
			target := tc.target
			if target == "ROOT" {
				target = venv
			}
			if tc.cycle {
				require.NoError(t, os.Symlink("a", filepath.Join(venv, "lib", "b")))
			}
			require.NoError(t, os.Symlink(target, filepath.Join(venv, filepath.FromSlash(tc.link))))

			err := CheckEnvLinks(venv)
			var le *LoopError
			require.True(t, errors.As(err, &le), "%v", err)
			require.Equal(t, tc.link, le.Link)
			require.Equal(t, tc.cycle, le.Cycle)
			require.Contains(t, err.Error(), tc.link+" is a symbolic link to ")
			require.NotContains(t, err.Error(), "\n")

			_, err = Pack(context.Background(), venv, &bytes.Buffer{}, Options{})
			require.True(t, errors.As(err, &le), "Pack: %v", err)
			require.Equal(t, tc.link, le.Link)
			_, err = PackDir(context.Background(), filepath.Join(venv, "lib"), &bytes.Buffer{})
			require.True(t, errors.As(err, &le), "PackDir: %v", err)
			require.Error(t, CheckDirLinks(filepath.Join(venv, "lib")))
		})
	}
}
