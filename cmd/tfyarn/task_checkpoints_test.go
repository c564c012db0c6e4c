package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/security"
)

// fakeConn is one connection of the store, named by the token it was made with.
type fakeConn struct {
	token  string
	closed bool
}

func (c *fakeConn) ReadDir(context.Context, string) ([]os.FileInfo, error) { return nil, nil }
func (c *fakeConn) MakePrivateDir(context.Context, string) error           { return nil }
func (c *fakeConn) WritePrivateFile(context.Context, string, io.Reader) (int64, error) {
	return 0, nil
}
func (c *fakeConn) ReadFileTo(context.Context, string, io.Writer) (int64, error) { return 0, nil }
func (c *fakeConn) RenameNoReplace(context.Context, string, string) error        { return nil }
func (c *fakeConn) RemoveAll(context.Context, string) error                      { return nil }
func (c *fakeConn) Close() error                                                 { c.closed = true; return nil }

// A keytab job's launcher connects to HDFS for its checkpoints with the
// AM's fresh tokens once they came, not with the container's first ones
// (which end at their maximum lifetime), and only then: one connection per
// refresh, made by the next operation; all closed with the store.
func TestCheckpointStoreFollowsFreshTokens(t *testing.T) {
	var conns []*fakeConn
	var logged []string
	fail := false
	s := &freshTokenStore{
		connect: func(_ context.Context, tokens []security.Token) (storeConn, error) {
			if fail {
				return nil, errors.New("the NameNode refused the token")
			}
			require.Len(t, tokens, 1)
			c := &fakeConn{token: string(tokens[0].Identifier)}
			conns = append(conns, c)
			return c, nil
		},
		logf: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) },
	}
	creds := func(id string) *security.Credentials {
		c := security.NewCredentials()
		c.AddToken("hdfs", security.Token{Identifier: []byte(id), Password: []byte("pw"), Kind: security.KindHDFSDelegation, Service: "nn:8020"})
		c.AddToken("other", security.Token{Identifier: []byte("rm"), Kind: "RM_DELEGATION_TOKEN"})
		return c
	}
	ctx := context.Background()
	s.tokens = hdfsTokens(creds("first"))
	require.NoError(t, s.MakePrivateDir(ctx, "/d"))
	require.NoError(t, s.RemoveAll(ctx, "/d"))
	require.Len(t, conns, 1, "one connection while the tokens stay")
	require.Equal(t, "first", conns[0].token)
	require.Empty(t, logged)

	// An operation under way keeps its connection open while a fresher one replaces it.
	_, done, err := s.use(ctx)
	require.NoError(t, err)
	s.refresh(creds("second"))
	s.refresh(creds("third"))
	_, err = s.ReadDir(ctx, "/d")
	require.NoError(t, err)
	require.Len(t, conns, 2, "the next operation connects anew, once")
	require.Equal(t, "third", conns[1].token, "with the newest tokens")
	require.Equal(t, []string{"checkpoints: connected to HDFS anew with the AM's fresh delegation tokens (refresh 2)"}, logged)
	require.False(t, conns[0].closed, "an operation may still use the old one")
	done()
	require.True(t, conns[0].closed, "closed once its last operation ended: a long job keeps at most two open")

	s.refresh(security.NewCredentials()) // no HDFS token: nothing to follow
	_, err = s.ReadFileTo(ctx, "/d/f", io.Discard)
	require.NoError(t, err)
	require.Len(t, conns, 2)

	s.refresh(creds("fourth"))
	fail = true
	_, err = s.WritePrivateFile(ctx, "/d/f", nil)
	require.ErrorContains(t, err, "the NameNode refused the token")
	fail = false
	require.NoError(t, s.RenameNoReplace(ctx, "/a", "/b"), "tried again at the next operation")
	require.Equal(t, "fourth", conns[2].token)

	s.close()
	for _, c := range conns {
		require.True(t, c.closed, c.token)
	}
}
