package hdfs

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

func TestPaths(t *testing.T) {
	const d = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	require.Equal(t, "/user/alice", HomeDir("alice"))
	require.Equal(t, "/user/alice/.tfyarn/cache", CacheDir("alice"))
	require.Equal(t, "/user/alice/.tfyarn/cache/"+d+"/env.tar.gz", CachePath("alice", d, "env.tar.gz"))
	require.Equal(t, "/user/alice/.tfyarn/application_1_0001", StagingDir("alice", "application_1_0001"))
	require.True(t, digestRE.MatchString(d))
	require.False(t, digestRE.MatchString(strings.ToUpper(d)))
}

func TestTempName(t *testing.T) {
	a, err := tempName("env.tar.gz")
	require.NoError(t, err)
	b, err := tempName("env.tar.gz")
	require.NoError(t, err)
	require.NotEqual(t, a, b)
	require.Regexp(t, `^\.env\.tar\.gz\.[0-9a-f]{16}\.tmp$`, a)
	require.True(t, isTempName(a))
	for _, n := range []string{"env.tar.gz", ".env", ".bashrc.tmp", "x.0123456789abcdef.tmp"} {
		require.False(t, isTempName(n), n)
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"env.tar.gz", "train.py", ".hidden", "a b"} {
		require.NoError(t, checkName(ok), ok)
	}
	for _, bad := range []string{"", ".", "..", "a/b", "/abs", "c:d", "nul\x00"} {
		require.Error(t, checkName(bad), "%q", bad)
	}
	require.NoError(t, checkAppID("application_1700000000000_0001"))
	for _, bad := range []string{"cache", ".x", "a/b", ""} {
		require.Error(t, checkAppID(bad), "%q", bad)
	}
}

func TestFileDigestStreams(t *testing.T) {
	// Several chunks and a ragged end, so chunk boundaries are exercised.
	data := make([]byte, 3*copyChunk+12345)
	_, err := rand.Read(data)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, data, 0o644))

	sum := sha256.Sum256(data)
	d, n, err := FileDigest(context.Background(), p)
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString(sum[:]), d)
	require.EqualValues(t, len(data), n)

	d2, n2, err := readerDigest(context.Background(), bytes.NewReader(nil))
	require.NoError(t, err)
	require.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", d2)
	require.Zero(t, n2)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = FileDigest(ctx, p)
	require.ErrorIs(t, err, context.Canceled)

	_, _, err = FileDigest(context.Background(), filepath.Join(t.TempDir(), "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestRename2Request checks the message sent for the non-overwriting rename:
// found in the registry, and overwriteDest=false really on the wire (a
// required proto2 field; leaving it out would make the NameNode reject the call).
func TestRename2Request(t *testing.T) {
	for _, overwrite := range []bool{false, true} {
		fields := rename2Fields(t, overwrite)
		require.Equal(t, "/a/.x.0123456789abcdef.tmp", string(fields[1]))
		require.Equal(t, "/a/x", string(fields[2]))
		if overwrite {
			require.Equal(t, []byte{1}, fields[3], "overwriteDest=true (adopting a shared cache entry)")
		} else {
			require.Equal(t, []byte{0}, fields[3], "overwriteDest=false must be encoded")
		}
		require.NotContains(t, fields, protowire.Number(4))
	}
}

func rename2Fields(t *testing.T, overwrite bool) map[protowire.Number][]byte {
	b, err := proto.Marshal(rename2Request("/a/.x.0123456789abcdef.tmp", "/a/x", overwrite))
	require.NoError(t, err)

	fields := map[protowire.Number][]byte{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		require.Positive(t, n)
		b = b[n:]
		switch typ {
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			require.Positive(t, n)
			fields[num] = v
			b = b[n:]
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			require.Positive(t, n)
			fields[num] = []byte{byte(v)}
			b = b[n:]
		default:
			t.Fatalf("unexpected wire type %v", typ)
		}
	}
	return fields
}

func TestPathErrorShape(t *testing.T) {
	inner := &os.PathError{Op: "create", Path: "/user/x/a.tgz", Err: os.ErrExist}
	err := pathErr("upload", "/user/x/a.tgz", inner)
	require.EqualError(t, err, "hdfs: upload /user/x/a.tgz: file already exists")
	require.ErrorIs(t, err, os.ErrExist)

	// A cause about another path keeps its own path.
	other := &os.PathError{Op: "mkdir", Path: "/user/x", Err: os.ErrPermission}
	require.EqualError(t, pathErr("upload", "/user/x/a.tgz", other),
		"hdfs: upload /user/x/a.tgz: mkdir /user/x: permission denied")

	// Already ours: not wrapped twice.
	require.EqualError(t, pathErr("stat", "/b", err), err.Error())
	require.NoError(t, pathErr("x", "/y", nil))

	var pe *PathError
	require.True(t, errors.As(err, &pe))
	require.Equal(t, "upload", pe.Op)
}
