package hdfs

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
)

// closedAddr is a local address nothing listens on (connections are refused).
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// silentNameNode accepts connections and never answers, like a hung NameNode.
func silentNameNode(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

func confFor(defaultFS string, kv ...string) *hadoopconf.Config {
	c := hadoopconf.New(func(string) (string, bool) { return "", false })
	c.Set(hadoopconf.KeyDefaultFS, defaultFS)
	for i := 0; i+1 < len(kv); i += 2 {
		c.Set(kv[i], kv[i+1])
	}
	return c
}

func TestConnectRefused(t *testing.T) {
	addr := closedAddr(t)
	start := time.Now()
	fs, err := Connect(context.Background(), confFor("hdfs://"+addr), "alice")
	elapsed := time.Since(start)
	require.Nil(t, fs)
	require.Error(t, err)
	require.Less(t, elapsed, 15*time.Second)
	require.True(t, strings.HasPrefix(err.Error(), "hdfs: cannot reach the NameNode at "+addr+": connection refused"), err.Error())
	require.Contains(t, err.Error(), "HADOOP_CONF_DIR")
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	var ce *ConnectError
	require.True(t, errors.As(err, &ce))
	require.Equal(t, []string{addr}, ce.Addrs)
}

func TestConnectHANamesEveryAddress(t *testing.T) {
	a1, a2 := closedAddr(t), closedAddr(t)
	conf := confFor("hdfs://ns1",
		"dfs.nameservices", "ns1",
		"dfs.ha.namenodes.ns1", "nn1,nn2",
		"dfs.namenode.rpc-address.ns1.nn1", a1,
		"dfs.namenode.rpc-address.ns1.nn2", a2)
	_, err := Connect(context.Background(), conf, "alice")
	require.Error(t, err)
	require.Contains(t, err.Error(), "hdfs: cannot reach any NameNode at "+a1+", "+a2+": connection refused")
}

// A NameNode that accepts but never answers must not hang Connect.
func TestConnectSilentNameNodeIsBounded(t *testing.T) {
	addr := silentNameNode(t)
	start := time.Now()
	_, err := ConnectOptions(context.Background(), confFor("hdfs://"+addr),
		Options{User: "alice", ConnectTimeout: time.Second})
	elapsed := time.Since(start)
	require.Error(t, err)
	require.Less(t, elapsed, 5*time.Second)
	require.Contains(t, err.Error(), "hdfs: cannot reach the NameNode at "+addr+": timed out")
}

func TestConnectHonoursContext(t *testing.T) {
	addr := silentNameNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Connect(ctx, confFor("hdfs://"+addr), "alice")
	require.Error(t, err)
	require.Less(t, time.Since(start), 3*time.Second)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = Connect(ctx, confFor("hdfs://"+addr), "alice")
	require.ErrorIs(t, err, context.Canceled)
}

func TestConnectRefusesWhatItCannotDo(t *testing.T) {
	_, err := Connect(context.Background(), confFor("hdfs://localhost:1", hadoopconf.KeyAuthentication, "kerberos"), "alice")
	require.ErrorContains(t, err, "Kerberos")
	_, err = Connect(context.Background(), confFor("file:///"), "alice")
	require.ErrorContains(t, err, "not an hdfs:// URI")
	_, err = Connect(context.Background(), confFor("hdfs://localhost:1"), "")
	require.ErrorContains(t, err, "no user")
}

func TestCallCtxReturnsEarlyAndDiscards(t *testing.T) {
	release := make(chan struct{})
	discarded := make(chan int, 1)
	started := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }() // cancel while the call is blocked
	_, err := callCtx(ctx, func() (int, error) { close(started); <-release; return 7, nil }, func(v int) { discarded <- v })
	require.ErrorIs(t, err, context.Canceled)
	close(release)
	select {
	case v := <-discarded:
		require.Equal(t, 7, v)
	case <-time.After(5 * time.Second):
		t.Fatal("late result was not discarded")
	}

	v, err := callCtx(context.Background(), func() (int, error) { return 3, nil }, nil)
	require.NoError(t, err)
	require.Equal(t, 3, v)
}

func TestDescribe(t *testing.T) {
	_, err := net.DialTimeout("tcp", closedAddr(t), time.Second)
	require.Equal(t, "connection refused", describe(err))
	require.Equal(t, "timed out", describe(context.DeadlineExceeded))
	require.Equal(t, "boom", describe(errors.New("boom")))
}
