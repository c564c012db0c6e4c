//go:build linux

package security

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// buildKeyringCCache lays c out in the kernel as MIT's kinit does under
// anchor: a collection keyring "_krb_<coll>" whose krb_ccache:primary
// names sub, and the cache keyring sub holding __krb5_princ__,
// __krb5_time_offsets__ and one user key per credential. It returns the
// collection and the cache keyring; the collection is unlinked at the end.
func buildKeyringCCache(t *testing.T, anchor int, coll, sub string, c keyringCCache) (int, int) {
	t.Helper()
	collection, err := unix.AddKey("keyring", keyringCollectionPrefix+coll, nil, anchor)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = unix.KeyctlInt(unix.KEYCTL_UNLINK, collection, anchor, 0, 0) })
	index := binary.BigEndian.AppendUint32(nil, keyringIndexVersion)
	index = binary.BigEndian.AppendUint32(index, uint32(len(sub)))
	_, err = unix.AddKey("user", keyringPrimaryKey, append(index, sub...), collection)
	require.NoError(t, err)
	cache, err := unix.AddKey("keyring", sub, nil, collection)
	require.NoError(t, err)
	_, err = unix.AddKey("user", keyringPrincipalKey, c.Principal, cache)
	require.NoError(t, err)
	if c.TimeOffsets != nil {
		_, err = unix.AddKey("user", keyringTimeOffsetsKey, c.TimeOffsets, cache)
		require.NoError(t, err)
	}
	for i, cred := range c.Credentials {
		_, err = unix.AddKey("user", "krbtgt/EXAMPLE.COM@EXAMPLE.COM#"+string(rune('a'+i)), cred, cache)
		require.NoError(t, err)
	}
	return collection, cache
}

// sessionWriteAnchor is where a test writes a session-anchored cache, as
// MIT does: a process without a session keyring of its own reads the user
// session keyring as KEY_SPEC_SESSION_KEYRING, but writing there would make
// a new session keyring, for the writing thread alone.
func sessionWriteAnchor(t *testing.T) int {
	s, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
	require.NoError(t, err)
	u, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_SESSION_KEYRING, false)
	require.NoError(t, err)
	if s == u {
		return unix.KEY_SPEC_USER_SESSION_KEYRING
	}
	return unix.KEY_SPEC_SESSION_KEYRING
}

// lockThread keeps the test on one OS thread: Linux keeps the process
// keyring in each thread's credentials, so a Go program's process keyring
// is, in effect, its thread's (tfyarn reads a keyring cache on one thread).
func lockThread(t *testing.T) {
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
}

func keyringLoginOptions(t *testing.T, name string) KerberosOptions {
	return KerberosOptions{
		Krb5Conf: writeKrb5Conf(t, closedPort(t)),
		CCache:   name,
		Getenv:   func(string) string { return "" },
		Now:      func() time.Time { return fuzzNow },
	}
}

// TestKeyringProcessAndThreadCaches: KEYRING:process: and KEYRING:thread:
// caches are read from this process's (this thread's) own keyrings, the
// collection's primary cache when the name has no subsidiary part; another
// thread sees no thread cache, and the error says why.
func TestKeyringProcessAndThreadCaches(t *testing.T) {
	lockThread(t)
	c := splitFileCCache(t, syntheticCCache(t, 0))
	c.TimeOffsets = make([]byte, 8)

	coll, sub := "tfyarn-"+randomName(t), "krb_ccache_"+randomName(t)
	buildKeyringCCache(t, unix.KEY_SPEC_PROCESS_KEYRING, coll, sub, c)
	l, err := LoginKerberos(t.Context(), keyringLoginOptions(t, "KEYRING:process:"+coll))
	require.NoError(t, err)
	require.Equal(t, "alice@EXAMPLE.COM", l.Principal)
	require.Equal(t, "ticket cache KEYRING:process:"+coll+":"+sub, l.Source)
	require.Equal(t, fuzzNow.Add(9*time.Hour).Unix(), l.Expires.Unix())

	coll = "tfyarn-" + randomName(t)
	buildKeyringCCache(t, unix.KEY_SPEC_THREAD_KEYRING, coll, coll, c)
	l, err = LoginKerberos(t.Context(), keyringLoginOptions(t, "KEYRING:thread:"+coll))
	require.NoError(t, err)
	require.Equal(t, "ticket cache KEYRING:thread:"+coll+":"+coll, l.Source)

	elsewhere := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // a thread of its own, never this one
		defer runtime.UnlockOSThread()
		opts := keyringLoginOptions(t, "KEYRING:thread:"+coll)
		opts.Principal = "alice@EXAMPLE.COM"
		_, err := LoginKerberos(t.Context(), opts)
		elsewhere <- err
	}()
	require.EqualError(t, <-elsewhere, "no Kerberos ticket for alice@EXAMPLE.COM (no ticket cache KEYRING:thread:"+coll+
		": a thread keyring belongs to the thread that ran kinit, so no other program sees it; use KEYRING:session: or KEYRING:persistent:); run kinit or pass --keytab")
}

// TestKeyringCacheErrors: a cache keyring the kernel expired (MIT sets its
// timeout to the tickets' end), a credential key that is not one, and a
// name MIT would refuse are each one line saying what to do.
func TestKeyringCacheErrors(t *testing.T) {
	lockThread(t)
	c := splitFileCCache(t, syntheticCCache(t, 0))

	coll := "tfyarn-" + randomName(t)
	_, cache := buildKeyringCCache(t, unix.KEY_SPEC_PROCESS_KEYRING, coll, coll, c)
	_, err := unix.KeyctlInt(unix.KEYCTL_SET_TIMEOUT, cache, 1, 0, 0)
	require.NoError(t, err)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err = LoginKerberos(t.Context(), keyringLoginOptions(t, "KEYRING:process:"+coll))
		var ke *KerberosError
		if errors.As(err, &ke) && ke.Hint == "run kinit again or pass --keytab" && ke.Err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the cache keyring %d with a 1 s timeout still reads as %v after 20 s", cache, err)
		time.Sleep(200 * time.Millisecond)
	}
	require.EqualError(t, err, "the Kerberos ticket cache KEYRING:process:"+coll+":"+coll+
		" has expired (the kernel removes a cache keyring when its tickets end); run kinit again or pass --keytab")

	coll = "tfyarn-" + randomName(t)
	bad := c
	bad.Credentials = [][]byte{{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}}
	buildKeyringCCache(t, unix.KEY_SPEC_PROCESS_KEYRING, coll, coll, bad)
	_, err = LoginKerberos(t.Context(), keyringLoginOptions(t, "KEYRING:process:"+coll))
	require.EqualError(t, err, "reading the ticket cache KEYRING:process:"+coll+":"+coll+
		`: credential user "krbtgt/EXAMPLE.COM@EXAMPLE.COM#a": client component count 4294967295 exceeds the 0 bytes left; run kinit again or pass --keytab`)

	_, err = LoginKerberos(t.Context(), keyringLoginOptions(t, "KEYRING:persistent:alice"))
	require.EqualError(t, err, `the ticket cache name KEYRING:persistent:alice (from KerberosOptions.CCache): not a KEYRING cache name: KEYRING:persistent: takes a numeric uid, not "alice"; set KRB5CCNAME to the cache kinit writes, e.g. KEYRING:persistent:$(id -u)`)
}

// TestKeyringReadCreatesNothing: looking for a KEYRING cache that is not
// there leaves no collection behind (MIT's libkrb5 would create an empty
// one with its primary name), and reading one changes none of its keys.
func TestKeyringReadCreatesNothing(t *testing.T) {
	lockThread(t)
	for _, anchor := range []struct {
		name string
		ring int
	}{{"session", unix.KEY_SPEC_SESSION_KEYRING}, {"user", unix.KEY_SPEC_USER_KEYRING}, {"process", unix.KEY_SPEC_PROCESS_KEYRING}} {
		coll := "tfyarn-absent-" + randomName(t)
		_, err := LoginKerberos(t.Context(), keyringLoginOptions(t, "KEYRING:"+anchor.name+":"+coll))
		require.ErrorContains(t, err, "(no ticket cache KEYRING:"+anchor.name+":"+coll)
		_, err = unix.KeyctlSearch(anchor.ring, "keyring", keyringCollectionPrefix+coll, 0)
		require.ErrorIs(t, err, unix.ENOKEY, "reading KEYRING:%s:%s made its collection", anchor.name, coll)
	}

	coll := "tfyarn-" + randomName(t)
	collection, cache := buildKeyringCCache(t, sessionWriteAnchor(t), coll, coll, splitFileCCache(t, syntheticCCache(t, 0)))
	before := [2][]byte{}
	for i, ring := range []int{collection, cache} {
		before[i], _ = readKey(ring, 1<<16)
	}
	_, err := LoginKerberos(t.Context(), keyringLoginOptions(t, "KEYRING:session:"+coll))
	require.NoError(t, err)
	for i, ring := range []int{collection, cache} {
		after, err := readKey(ring, 1<<16)
		require.NoError(t, err)
		require.Equal(t, before[i], after, "the keys of keyring %d", ring)
	}
}
