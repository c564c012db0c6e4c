//go:build e2e

package clustertest

import (
	"bytes"
	"crypto/rand"
	"io"
	"os/user"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	colinconf "github.com/colinmarc/hdfs/v2/hadoopconf"
	"github.com/stretchr/testify/require"
)

// TestHDFSRoundTrip proves the harness from the Go side: using nothing but the client
// configuration the cluster wrote, a Go client writes, lists and reads back a file.
func TestHDFSRoundTrip(t *testing.T) {
	c := Require(t)
	conf, err := colinconf.Load(c.ConfDir)
	require.NoError(t, err)
	opts := hdfs.ClientOptionsFromConf(conf)
	require.Equal(t, []string{strings.TrimPrefix(c.Facts["fs.defaultFS"], "hdfs://")}, opts.Addresses, "fs.defaultFS from .testcluster/conf")
	u, err := user.Current()
	require.NoError(t, err)
	opts.User = u.Username

	client, err := hdfs.NewClient(opts)
	require.NoError(t, err)
	defer client.Close()

	dir := path.Join("/tmp", "clustertest-"+t.Name())
	_ = client.RemoveAll(dir)
	require.NoError(t, client.MkdirAll(dir, 0o755))
	defer client.RemoveAll(dir)

	// Larger than one packet and not a multiple of the chunk size, so the DataNode write
	// pipeline and checksums are really exercised.
	payload := make([]byte, 3<<20+17)
	_, err = rand.Read(payload)
	require.NoError(t, err)
	w, err := client.Create(path.Join(dir, "payload.bin"))
	require.NoError(t, err)
	_, err = w.Write(payload)
	require.NoError(t, err)
	// Like Hadoop's own DFSOutputStream, keep asking until the NameNode has heard from the
	// DataNode about the last block; on a loaded machine that can take a moment.
	for attempt := 1; ; attempt++ {
		err = w.Close()
		if err == nil || !hdfs.IsErrReplicating(err) || attempt == 10 {
			break
		}
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
	require.NoError(t, err)

	entries, err := client.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, "payload.bin", entries[0].Name())
	require.EqualValues(t, len(payload), entries[0].Size())

	r, err := client.Open(path.Join(dir, "payload.bin"))
	require.NoError(t, err)
	defer r.Close()
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.True(t, bytes.Equal(payload, got), "read back differs from what was written")

	// Hadoop's own CLI sees the same file with the same length.
	listing := c.Hadoop(t, "hdfs", "dfs", "-ls", dir)
	require.Contains(t, listing, "payload.bin")
	require.Contains(t, listing, " 3145745 ")
}
