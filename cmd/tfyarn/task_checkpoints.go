package main

import (
	"context"
	"io"
	"os"
	"sync"

	"github.com/tfyarn/tfyarn/internal/checkpoint"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/security"
)

// freshTokenStore is a launcher's checkpoint store on a Kerberized HDFS:
// one connection, made anew with the newest HDFS delegation tokens once the
// AM has published fresh ones (a keytab job's). The tokens the launcher
// started with end at their maximum lifetime, and any later NameNode
// connection (after an idle close, a failover) would need a valid one.
type freshTokenStore struct {
	connect func(ctx context.Context, tokens []security.Token) (storeConn, error)
	logf    func(format string, args ...any)

	mu      sync.Mutex
	conn    *heldConn        // the connection operations use; nil before the first
	tokens  []security.Token // the newest, to connect with
	version int              // how many refreshes; 0: the container's own tokens
	stale   bool             // conn predates tokens
}

// heldConn is a connection and how many operations use it: one replaced by
// a fresher is closed when its last operation ends, so a long job keeps at
// most two open however often its tokens are refreshed.
type heldConn struct {
	storeConn
	users    int
	replaced bool
}

var _ checkpoint.Store = (*freshTokenStore)(nil)

// storeConn is one connection of the store: an *hdfs.FS.
type storeConn interface {
	checkpoint.Store
	Close() error
}

var _ storeConn = (*hdfs.FS)(nil)

// refresh takes the launcher's credentials after the AM's fresh ones
// changed them (executor.Config.OnFreshCredentials); the next operation
// connects with them.
func (s *freshTokenStore) refresh(creds *security.Credentials) {
	tokens := hdfsTokens(creds)
	if len(tokens) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens, s.stale = tokens, true
	s.version++
}

// hdfsTokens are creds' HDFS delegation tokens.
func hdfsTokens(creds *security.Credentials) []security.Token {
	var tokens []security.Token
	for _, t := range creds.TokensOfKind(security.KindHDFSDelegation) {
		tokens = append(tokens, t.Token)
	}
	return tokens
}

// use is the connection for one operation, made anew when fresh tokens
// came, and the release to call when the operation ends. Connecting holds
// no lock: a refresh (the program's token file's) never waits on the
// NameNode.
func (s *freshTokenStore) use(ctx context.Context) (storeConn, func(), error) {
	s.mu.Lock()
	if s.conn != nil && !s.stale {
		c := s.conn
		c.users++
		s.mu.Unlock()
		return c, func() { s.release(c) }, nil
	}
	tokens, version := s.tokens, s.version
	s.mu.Unlock()
	conn, err := s.connect(ctx, tokens)
	if err != nil {
		return nil, nil, err
	}
	c := &heldConn{storeConn: conn, users: 1}
	s.mu.Lock()
	if old := s.conn; old != nil {
		s.logf("checkpoints: connected to HDFS anew with the AM's fresh delegation tokens (refresh %d)", version)
		old.replaced = true
		s.closeIfUnused(old)
	}
	s.conn = c
	s.stale = s.version != version // fresher tokens came while connecting
	s.mu.Unlock()
	return c, func() { s.release(c) }, nil
}

func (s *freshTokenStore) release(c *heldConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.users--
	s.closeIfUnused(c)
}

// closeIfUnused closes a replaced connection no operation uses; s.mu held.
func (s *freshTokenStore) closeIfUnused(c *heldConn) {
	if c.replaced && c.users == 0 {
		c.Close()
	}
}

// close closes the store's connection; replaced ones close as their
// operations end.
func (s *freshTokenStore) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.replaced = true
		s.closeIfUnused(s.conn)
		s.conn = nil
	}
}

func (s *freshTokenStore) ReadDir(ctx context.Context, p string) ([]os.FileInfo, error) {
	fs, done, err := s.use(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return fs.ReadDir(ctx, p)
}

func (s *freshTokenStore) MakePrivateDir(ctx context.Context, p string) error {
	fs, done, err := s.use(ctx)
	if err != nil {
		return err
	}
	defer done()
	return fs.MakePrivateDir(ctx, p)
}

func (s *freshTokenStore) WritePrivateFile(ctx context.Context, p string, r io.Reader) (int64, error) {
	fs, done, err := s.use(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	return fs.WritePrivateFile(ctx, p, r)
}

func (s *freshTokenStore) ReadFileTo(ctx context.Context, p string, w io.Writer) (int64, error) {
	fs, done, err := s.use(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	return fs.ReadFileTo(ctx, p, w)
}

func (s *freshTokenStore) RenameNoReplace(ctx context.Context, src, dst string) error {
	fs, done, err := s.use(ctx)
	if err != nil {
		return err
	}
	defer done()
	return fs.RenameNoReplace(ctx, src, dst)
}

func (s *freshTokenStore) RemoveAll(ctx context.Context, p string) error {
	fs, done, err := s.use(ctx)
	if err != nil {
		return err
	}
	defer done()
	return fs.RemoveAll(ctx, p)
}
