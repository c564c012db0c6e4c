package hdfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoophdfs"
)

// Defaults for Options.
const (
	// DefaultConnectTimeout bounds Connect as a whole, so a dead or black-holed
	// NameNode is reported well within the 15 s users tolerate at submission.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultIOTimeout mirrors Hadoop's dfs.client.socket-timeout.
	DefaultIOTimeout = 60 * time.Second
)

// clientProtocol is the NameNode's RPC protocol name.
const clientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// Options tune Connect. The zero value (plus a User) is right for an insecure cluster.
type Options struct {
	// User is the HDFS user to act as (SIMPLE auth); callers pass
	// HADOOP_USER_NAME or the OS user.
	User string
	// ConnectTimeout bounds Connect, unless ctx ends first. 0: DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// IOTimeout bounds each socket read or write to a NameNode or DataNode once
	// connected. 0: DefaultIOTimeout.
	IOTimeout time.Duration
	// Kerberos is the login on a Kerberized cluster
	// (hadoop.security.authentication=kerberos): every NameNode call uses
	// SASL GSSAPI, DataNode connections follow dfs.data.transfer.protection,
	// and User is replaced by the principal's short name.
	Kerberos *security.KerberosLogin
	// Tokens, on a Kerberized cluster without a Kerberos login (an
	// ApplicationMaster, a task's launcher), are the HDFS delegation
	// tokens to authenticate with (TOKEN/DIGEST-MD5): every NameNode
	// connection, colinmarc's too (ipc.ForeignClientConn), and DataNode
	// connections with the block tokens the NameNode hands out.
	Tokens []security.Token
}

// FS is a connection to the default HDFS filesystem of a Hadoop configuration.
// It is safe for concurrent use.
type FS struct {
	client *gohdfs.Client
	rpc    *ipc.Client // our own NameNode client: calls colinmarc lacks (non-overwriting rename)

	user   string
	target hadoopconf.HDFSTarget
	// urlHost and urlPort are the authority of the filesystem URI as YARN
	// should see it; urlPort is -1 for a nameservice (no port).
	urlHost string
	urlPort int32

	ioTimeout time.Duration

	closeOnce sync.Once
	closeErr  error

	mu sync.Mutex
	// connectBy caps socket deadlines while Connect runs, so the first
	// exchanges with a NameNode that accepts but never answers end in time.
	connectBy time.Time
	// dialErrs keeps the last dial failure per address: colinmarc flattens
	// them into a string, and users need to see which address failed and why.
	dialErrs map[string]error
	// authErr is the last refusal of a delegation token by a NameNode.
	authErr error
	// openDirs caches, per directory, whether others may traverse it
	// (cacheVisibility): a submission asks for the same ancestors for
	// every file it ships.
	openDirs map[string]bool
	// closedDirs are the user's directories already checked to be no more
	// open than they should be (tighten): once per FS.
	closedDirs map[string]bool
}

// Connect connects to the NameNode(s) of conf's fs.defaultFS as user.
func Connect(ctx context.Context, conf *hadoopconf.Config, user string) (*FS, error) {
	return ConnectOptions(ctx, conf, Options{User: user})
}

// ConnectOptions is Connect with tuning and the Kerberos seam.
func ConnectOptions(ctx context.Context, conf *hadoopconf.Config, opts Options) (*FS, error) {
	fs, err := newFS(conf, opts)
	if err != nil {
		return nil, err
	}
	target := fs.target
	connectTimeout := opts.ConnectTimeout
	if connectTimeout <= 0 {
		connectTimeout = DefaultConnectTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	fs.mu.Lock()
	fs.connectBy = deadline
	fs.mu.Unlock()

	auth, err := nameNodeAuth(conf, target, opts)
	if err != nil {
		return nil, err
	}
	fs.user = auth.user
	var tokenAuth *ipc.Config // colinmarc speaks SIMPLE and Kerberos only: ours authenticates its connections
	if auth.tokenOnly {
		tokenAuth = nameNodeRPCConfig(target, auth, connectTimeout, fs.ioTimeout)
	}

	copts := gohdfs.ClientOptions{
		Addresses:        target.Addresses,
		User:             fs.user,
		NamenodeDialFunc: fs.dialNameNode(ctx, tokenAuth),
		DatanodeDialFunc: fs.dialDataNode,
	}
	if v, _ := conf.Get("dfs.client.use.datanode.hostname"); v == "true" {
		copts.UseDatanodeHostname = true
	}
	if conf.SecurityEnabled() {
		// DataNodes take the NameNode's block tokens, whichever way the
		// NameNode was reached.
		copts.DataTransferProtection = conf.DataTransferProtection()
	}
	if opts.Kerberos != nil {
		copts.KerberosClient = opts.Kerberos.Client
		copts.KerberosServicePrincipleName = auth.spn
	}

	client, err := dialAndProbe(ctx, copts)
	if err != nil {
		if opts.Kerberos != nil {
			if aerr := fs.kerberosAuthError(ctx, auth, connectTimeout); aerr != nil {
				return nil, aerr
			}
		}
		if aerr := fs.tokenAuthError(); aerr != nil {
			return nil, &TokenError{URI: target.URI, Op: "cannot authenticate with the HDFS delegation token to", Err: aerr}
		}
		return nil, fs.connectError(ctx, err, conf)
	}
	fs.client = client
	fs.mu.Lock()
	fs.connectBy = time.Time{}
	fs.mu.Unlock()

	fs.rpc, err = newNameNodeRPC(target, auth, connectTimeout, fs.ioTimeout)
	if err != nil {
		client.Close()
		return nil, err
	}
	return fs, nil
}

// newFS is the FS of conf's fs.defaultFS for opts, not yet connected.
func newFS(conf *hadoopconf.Config, opts Options) (*FS, error) {
	if opts.User == "" {
		return nil, errors.New("hdfs: no user given")
	}
	target, err := conf.DefaultHDFS()
	if err != nil {
		return nil, fmt.Errorf("hdfs: %w", err)
	}
	u, err := url.Parse(target.URI)
	if err != nil {
		return nil, fmt.Errorf("hdfs: %s: %w", target.URI, err)
	}
	fs := &FS{
		user:      opts.User,
		target:    target,
		urlHost:   u.Hostname(),
		urlPort:   -1,
		ioTimeout: opts.IOTimeout,
		dialErrs:  map[string]error{},
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("hdfs: bad port in %s: %w", target.URI, err)
		}
		fs.urlPort = int32(n)
	}
	if fs.ioTimeout <= 0 {
		fs.ioTimeout = DefaultIOTimeout
	}
	return fs, nil
}

// dialAndProbe makes colinmarc's client and proves the NameNode answers.
// NewClient dials without a context of its own and, under SIMPLE auth,
// sends its handshake without waiting for an answer, so a probe call
// (which also caches the server defaults every later write needs, before
// concurrent writers would race to fill that cache) proves the NameNode
// is really there.
func dialAndProbe(ctx context.Context, copts gohdfs.ClientOptions) (*gohdfs.Client, error) {
	return callCtx(ctx, func() (*gohdfs.Client, error) {
		c, err := gohdfs.NewClient(copts)
		if err != nil {
			return nil, err
		}
		if _, err := c.ServerDefaults(); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}, func(c *gohdfs.Client) { c.Close() })
}

// kerberosAuthError explains a failed Kerberos connect to a NameNode that
// was reachable: our own client checks the principal the NameNode offers
// against dfs.namenode.kerberos.principal, as Hadoop's does, where colinmarc
// asks the KDC for the configured name and reports only that the KDC does
// not know it. nil when the probe finds no principal mismatch.
func (fs *FS) kerberosAuthError(ctx context.Context, auth nnAuth, dial time.Duration) error {
	fs.mu.Lock()
	unreachable := len(fs.dialErrs)
	fs.mu.Unlock()
	if unreachable >= len(fs.target.Addresses) || ctx.Err() != nil {
		return nil
	}
	rpc, err := newNameNodeRPC(fs.target, auth, dial, fs.ioTimeout)
	if err != nil {
		return nil
	}
	defer rpc.Close()
	err = rpc.Call(ctx, "getServerDefaults", &hadoophdfs.GetServerDefaultsRequestProto{}, &hadoophdfs.GetServerDefaultsResponseProto{})
	var pm *ipc.PrincipalMismatchError
	if errors.As(err, &pm) {
		return fmt.Errorf("hdfs: authenticating to the NameNode of %s: %w", fs.target.URI, err)
	}
	return nil
}

// User is the HDFS user this FS acts as.
func (fs *FS) User() string { return fs.user }

// Target is where the NameNode(s) are.
func (fs *FS) Target() hadoopconf.HDFSTarget { return fs.target }

// Close releases the connections; later calls are no-ops (colinmarc's Close
// panics when repeated). Files being written are abandoned.
func (fs *FS) Close() error {
	fs.closeOnce.Do(func() {
		fs.closeErr = fs.client.Close()
		if e := fs.rpc.Close(); fs.closeErr == nil {
			fs.closeErr = e
		}
	})
	return fs.closeErr
}

// dialNameNode dials colinmarc's NameNode connections; with tokenAuth, each
// is authenticated with the delegation token before colinmarc speaks on it.
func (fs *FS) dialNameNode(connectCtx context.Context, tokenAuth *ipc.Config) func(context.Context, string, string) (net.Conn, error) {
	return func(_ context.Context, network, addr string) (net.Conn, error) {
		// colinmarc passes context.Background(); while connecting, Connect's
		// ctx is the one that matters. Later redials (after a failure) must
		// not inherit it: it is long gone by then.
		fs.mu.Lock()
		connecting := !fs.connectBy.IsZero()
		fs.mu.Unlock()
		ctx := context.Background()
		if connecting {
			ctx = connectCtx
		}
		d := net.Dialer{Timeout: fs.ioTimeout, KeepAlive: 30 * time.Second}
		conn, err := d.DialContext(ctx, network, addr)
		fs.mu.Lock()
		if err != nil {
			fs.dialErrs[addr] = err
		} else {
			delete(fs.dialErrs, addr)
		}
		fs.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if tokenAuth != nil {
			authed, err := ipc.ForeignClientConn(ctx, conn, *tokenAuth, addr)
			fs.mu.Lock()
			fs.authErr = err
			fs.mu.Unlock()
			if err != nil {
				conn.Close()
				return nil, err
			}
			conn = authed
		}
		return &deadlineConn{Conn: conn, fs: fs}, nil
	}
}

// tokenAuthError is the NameNode's refusal of the delegation token when
// that is why colinmarc could not connect; nil otherwise.
func (fs *FS) tokenAuthError() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.authErr
}

// dialDataNode only bounds the dial: colinmarc sets deadlines on DataNode
// connections itself from FileWriter/FileReader.SetDeadline, which we use.
func (fs *FS) dialDataNode(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: fs.ioTimeout, KeepAlive: 30 * time.Second}
	return d.DialContext(ctx, network, addr)
}

// socketDeadline is the deadline for the next NameNode socket operation.
func (fs *FS) socketDeadline() time.Time {
	d := time.Now().Add(fs.ioTimeout)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if !fs.connectBy.IsZero() && fs.connectBy.Before(d) {
		return fs.connectBy
	}
	return d
}

// deadlineConn gives every read and write on a NameNode connection a
// deadline, because colinmarc sets none and a NameNode that stops answering
// would otherwise hang a call forever.
type deadlineConn struct {
	net.Conn
	fs *FS
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(c.fs.socketDeadline()); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if err != nil {
		// colinmarc keeps a connection whose read failed; a reply arriving
		// late would then be taken for the next call's. Closing it makes the
		// next call redial instead.
		c.Conn.Close()
	}
	return n, err
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(c.fs.socketDeadline()); err != nil {
		return 0, err
	}
	n, err := c.Conn.Write(p)
	if err != nil {
		c.Conn.Close()
	}
	return n, err
}

// do runs a call to colinmarc's client, which cannot be cancelled, so that a
// cancelled ctx returns at once. The abandoned call goes on in the background
// and ends within the socket deadlines (Options.IOTimeout).
func (fs *FS) do(ctx context.Context, fn func() error) error {
	_, err := callCtx(ctx, func() (struct{}, error) { return struct{}{}, fn() }, nil)
	return err
}

// callCtx runs fn, returning early with ctx's error when ctx ends first; the
// late result of an abandoned fn is passed to discard (if any) to release it.
func callCtx[T any](ctx context.Context, fn func() (T, error), discard func(T)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if ctx.Done() == nil {
		return fn()
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		if discard != nil {
			go func() {
				if r := <-ch; r.err == nil {
					discard(r.v)
				}
			}()
		}
		return zero, ctx.Err()
	}
}
