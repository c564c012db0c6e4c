package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAndFormatRoundTrip(t *testing.T) {
	src := "# a comment\n\nnew chief=1 rule=chief\n----\n\nexit chief:0 0\n----\nstop ps:0\nfinish SUCCEEDED\n\n# trailing\n"
	path := filepath.Join(t.TempDir(), "t.txt")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	f, err := Parse(path)
	require.NoError(t, err)
	require.Len(t, f.Cases, 2)
	require.Equal(t, "new", f.Cases[0].Cmd.Name)
	require.Equal(t, "1", f.Cases[0].Cmd.Get("chief", ""))
	require.Equal(t, []string{"chief:0", "0"}, f.Cases[1].Cmd.Args)
	require.Equal(t, "stop ps:0\nfinish SUCCEEDED", f.Cases[1].Want)
	require.Equal(t, src, f.Format([]string{"", "stop ps:0\nfinish SUCCEEDED"}))
}

func TestParseRefusesACommandWithoutSeparator(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.txt")
	require.NoError(t, os.WriteFile(path, []byte("new chief=1\nexit chief:0 0\n"), 0o644))
	_, err := Parse(path)
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "t.txt:1"), err.Error())
}
