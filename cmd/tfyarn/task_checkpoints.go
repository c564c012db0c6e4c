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
	fs      storeConn
	tokens  []security.Token // the newest, to connect with
	version int              // how many refreshes; 0: the container's own tokens
	stale   bool             // fs predates tokens
	old     []storeConn      // replaced; closed with the store (an operation may still use one)
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

// current is the connection to use, made anew when fresh tokens came.
func (s *freshTokenStore) current(ctx context.Context) (storeConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fs != nil && !s.stale {
		return s.fs, nil
	}
	fs, err := s.connect(ctx, s.tokens)
	if err != nil {
		return nil, err
	}
	if s.fs != nil {
		s.old = append(s.old, s.fs)
		s.logf("checkpoints: connected to HDFS anew with the AM's fresh delegation tokens (refresh %d)", s.version)
	}
	s.fs, s.stale = fs, false
	return fs, nil
}

func (s *freshTokenStore) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fs := range append(s.old, s.fs) {
		if fs != nil {
			fs.Close()
		}
	}
	s.fs, s.old = nil, nil
}

func (s *freshTokenStore) ReadDir(ctx context.Context, p string) ([]os.FileInfo, error) {
	fs, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	return fs.ReadDir(ctx, p)
}

func (s *freshTokenStore) MakePrivateDir(ctx context.Context, p string) error {
	fs, err := s.current(ctx)
	if err != nil {
		return err
	}
	return fs.MakePrivateDir(ctx, p)
}

func (s *freshTokenStore) WritePrivateFile(ctx context.Context, p string, r io.Reader) (int64, error) {
	fs, err := s.current(ctx)
	if err != nil {
		return 0, err
	}
	return fs.WritePrivateFile(ctx, p, r)
}

func (s *freshTokenStore) ReadFileTo(ctx context.Context, p string, w io.Writer) (int64, error) {
	fs, err := s.current(ctx)
	if err != nil {
		return 0, err
	}
	return fs.ReadFileTo(ctx, p, w)
}

func (s *freshTokenStore) RenameNoReplace(ctx context.Context, src, dst string) error {
	fs, err := s.current(ctx)
	if err != nil {
		return err
	}
	return fs.RenameNoReplace(ctx, src, dst)
}

func (s *freshTokenStore) RemoveAll(ctx context.Context, p string) error {
	fs, err := s.current(ctx)
	if err != nil {
		return err
	}
	return fs.RemoveAll(ctx, p)
}
