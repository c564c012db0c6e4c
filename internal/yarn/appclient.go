package yarn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"google.golang.org/protobuf/proto"
)

// ApplicationClientProtocol is the RM's client-facing protocol name.
const ApplicationClientProtocol = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB"

// ClientOptions tune how a client reaches its server. Zero values take ipc's
// defaults.
type ClientOptions struct {
	// User is the effective user for SIMPLE auth; empty means
	// HADOOP_USER_NAME, else the OS user.
	User string
	// SASL mechanisms to offer (Kerberos, tokens); empty means SIMPLE.
	SASL []ipc.SaslMechanism
	// RequireSASL refuses a ResourceManager that accepts SIMPLE auth only
	// (a client configured for Kerberos talking to an insecure cluster).
	RequireSASL bool
	// DialTimeout bounds connecting to one address.
	DialTimeout time.Duration
	// MaxAttempts bounds the tries of one call across all addresses.
	MaxAttempts int
	// Backoff is the pause between rounds over the addresses.
	Backoff time.Duration
}

// ApplicationClient calls ApplicationClientProtocol on the ResourceManager
// (or on whichever member of an HA pair is active). It is safe for
// concurrent use.
type ApplicationClient struct {
	rpc   *ipc.Client
	addrs []string
	user  string
}

// NewApplicationClient reaches the RM addresses conf names (in rm-ids order
// under HA). It does not connect until the first call.
func NewApplicationClient(conf *hadoopconf.Config, opts ClientOptions) (*ApplicationClient, error) {
	addrs, err := conf.RMAddresses(hadoopconf.RMClient)
	if err != nil {
		return nil, fmt.Errorf("yarn: ResourceManager address: %w", err)
	}
	return NewApplicationClientAt(addrs, opts)
}

// NewApplicationClientAt reaches the RM at explicit addresses, tried in order.
func NewApplicationClientAt(addrs []string, opts ClientOptions) (*ApplicationClient, error) {
	user := opts.User
	if user == "" {
		user = ipc.DefaultUser()
	}
	rpc, err := ipc.NewClient(ipc.Config{
		Addresses:   addrs,
		Protocol:    ApplicationClientProtocol,
		User:        user,
		SASL:        opts.SASL,
		RequireSASL: opts.RequireSASL,
		DialTimeout: opts.DialTimeout,
		MaxAttempts: opts.MaxAttempts,
		Backoff:     opts.Backoff,
	})
	if err != nil {
		return nil, fmt.Errorf("yarn: %w", err)
	}
	return &ApplicationClient{rpc: rpc, addrs: append([]string(nil), addrs...), user: user}, nil
}

// Addrs returns the configured RM addresses, in failover order.
func (c *ApplicationClient) Addrs() []string { return append([]string(nil), c.addrs...) }

// User returns the user the RM sees calls from.
func (c *ApplicationClient) User() string { return c.user }

// Close drops the connections.
func (c *ApplicationClient) Close() error { return c.rpc.Close() }

func (c *ApplicationClient) call(ctx context.Context, method string, req, resp proto.Message) error {
	if err := c.rpc.Call(ctx, method, req, resp); err != nil {
		return &RMError{Method: method, Addr: errAddr(err, c.rpc.Addr()), Addrs: c.Addrs(), Err: err}
	}
	return nil
}

// RMError is a failed ResourceManager call. Like os.PathError it names the
// operation and where it went: "yarn: getApplicationReport localhost:8032: <cause>".
type RMError struct {
	Method string   // protocol method, e.g. getApplicationReport
	Addr   string   // the address that answered, or the last one tried
	Addrs  []string // every configured address
	Err    error    // an *ipc.RemoteError or *ipc.OpError
}

func (e *RMError) Error() string {
	return fmt.Sprintf("yarn: %s %s: %s", e.Method, e.Addr, e.Reason())
}

// Reason is the cause alone, without the method and address: for a remote
// exception "ShortClass: message", else the local failure.
func (e *RMError) Reason() string { return causeText(e.Err) }

func (e *RMError) Unwrap() error { return e.Err }

// causeText keeps the message one layer deep: ipc's errors repeat the method
// and address that RMError already names.
func causeText(err error) string {
	var re *ipc.RemoteError
	if errors.As(err, &re) {
		if re.Message == "" {
			return re.Class
		}
		return shortClass(re.Class) + ": " + re.Message
	}
	var oe *ipc.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}

func errAddr(err error, fallback string) string {
	var re *ipc.RemoteError
	if errors.As(err, &re) && re.Addr != "" {
		return re.Addr
	}
	var oe *ipc.OpError
	if errors.As(err, &oe) && oe.Addr != "" {
		return oe.Addr
	}
	return fallback
}

func shortClass(class string) string {
	for i := len(class) - 1; i >= 0; i-- {
		if class[i] == '.' {
			return class[i+1:]
		}
	}
	return class
}
