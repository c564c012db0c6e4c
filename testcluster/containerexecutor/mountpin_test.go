package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	st, err := os.Stat(p)
	require.NoError(t, err)
	return st.Sys().(*syscall.Stat_t).Ino
}

// TestPinMountsMountsWhatWasChecked: the Docker mount race. A user's mount source in his own
// directory below an allowed root passes the check; he then swaps the directory for a link to a
// place no mount may reach (here a directory outside the roots standing in for /). The source
// handed to Docker, a bind mount of the checked object in the NodeManager's private directory,
// still is the checked directory, not the link's target. (Root only, like the helper: it mounts.)
func TestPinMountsMountsWhatWasChecked(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	allowed, secret := filepath.Join(root, "local"), filepath.Join(root, "secret")
	src := filepath.Join(allowed, "usercache", "mallory", "data")
	require.NoError(t, os.MkdirAll(src, 0o755))
	require.NoError(t, os.MkdirAll(secret, 0o700))
	checked := inode(t, src)
	c := &config{DockerRWMounts: []string{allowed}}
	s := &runSpec{Mounts: []dockerMount{{Src: src, Dst: "/data"}}}
	require.NoError(t, checkMountSource(c, s.Mounts[0], src), "the source passes the path check")

	pinned, err := pinMounts(c, s)
	require.NoError(t, err)
	defer closeAll(pinned)
	private := filepath.Join(root, "nmPrivate")
	require.NoError(t, os.Mkdir(private, 0o700))
	unstage, err := stageMounts(s, pinned, filepath.Join(private, "mounts"))
	require.NoError(t, err)
	defer unstage()
	// Between the check and Docker's mount: the directory renamed away, a link in its place.
	require.NoError(t, os.Rename(src, src+".old"))
	require.NoError(t, os.Symlink(secret, src))

	require.Equal(t, filepath.Join(private, "mounts", "0"), s.Mounts[0].Src, "the source handed to Docker")
	require.Equal(t, checked, inode(t, s.Mounts[0].Src), "Docker would mount another object than the one checked")
	require.NotEqual(t, inode(t, secret), inode(t, s.Mounts[0].Src))
	require.Contains(t, strings.Join(s.argv(), " "), "--volume "+s.Mounts[0].Src+":/data:rw,rprivate")
	// A file as the source too; and unstaging leaves nothing mounted or behind.
	file := filepath.Join(src+".old", "f")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	s2 := &runSpec{Mounts: []dockerMount{{Src: file, Dst: "/f"}}}
	p2, err := pinMounts(c, s2)
	require.NoError(t, err)
	defer closeAll(p2)
	un2, err := stageMounts(s2, p2, filepath.Join(private, "mounts2"))
	require.NoError(t, err)
	require.Equal(t, inode(t, file), inode(t, s2.Mounts[0].Src))
	un2()
	unstage()
	require.NoDirExists(t, filepath.Join(private, "mounts"))
	require.NoDirExists(t, filepath.Join(private, "mounts2"))
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	require.NotContains(t, string(mounts), private, "a staging mount is left")
}

// TestPinMountsRefusesLinks: a source with a symbolic link on its way when it is opened (swapped
// in after the resolving check) is refused, not followed; so is one that no longer exists.
func TestPinMountsRefusesLinks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	allowed := filepath.Join(root, "local")
	user := filepath.Join(allowed, "usercache", "mallory")
	require.NoError(t, os.MkdirAll(user, 0o755))
	require.NoError(t, os.Symlink("/", filepath.Join(user, "data")))
	c := &config{DockerRWMounts: []string{allowed}}
	for _, src := range []string{filepath.Join(user, "data"), filepath.Join(user, "data", "etc"), filepath.Join(user, "gone")} {
		s := &runSpec{Mounts: []dockerMount{{Src: src, Dst: "/data"}}}
		_, err := pinMounts(c, s)
		require.Error(t, err, src)
		require.Equal(t, exitInvalidDocker, codeOf(t, err))
		require.Equal(t, src, s.Mounts[0].Src, "a refused source is left as it was")
	}
	_, err = openNoLinks(filepath.Join(user, "data"))
	require.ErrorContains(t, err, "symbolic link on the way (data)")
	// Outside the roots: refused after the open as well.
	s := &runSpec{Mounts: []dockerMount{{Src: root, Dst: "/data"}}}
	_, err = pinMounts(c, s)
	require.ErrorContains(t, err, "is not allowed read-write")
}
