package ipc

import (
	"errors"
	"os"
	"os/user"
	"time"
)

// Defaults, chosen to match Hadoop's client where it has an equivalent.
const (
	// DefaultMaxFrame mirrors ipc.maximum.response.length / ipc.maximum.data.length.
	DefaultMaxFrame = 128 << 20
	// DefaultDialTimeout mirrors ipc.client.connect.timeout.
	DefaultDialTimeout = 20 * time.Second
	// DefaultCallTimeout applies only when the call's context has no deadline.
	DefaultCallTimeout = 60 * time.Second
	// DefaultIdleTimeout mirrors ipc.client.connection.maxidletime.
	DefaultIdleTimeout = 10 * time.Second
	// DefaultBackoff is the pause after the first full round over all addresses failed.
	DefaultBackoff = 200 * time.Millisecond
	maxBackoff     = 5 * time.Second
)

// Config describes one logical RPC endpoint: a protocol served at one or more
// addresses (several for HA pairs such as ResourceManagers rm1, rm2).
type Config struct {
	// Addresses are host:port pairs tried in order; the one that last worked is
	// tried first.
	Addresses []string
	// Protocol is the server-side protocol name, sent in the connection context
	// and in every request header.
	Protocol string
	// ProtocolVersion is the clientProtocolVersion of each request; 0 means 1,
	// which is what every protobuf-based Hadoop protocol declares.
	ProtocolVersion uint64
	// User is the effective user announced for SIMPLE (and Kerberos) auth.
	// Empty means HADOOP_USER_NAME, else the OS user.
	User string

	// SASL lists the mechanisms this client can use. Empty means plain SIMPLE
	// auth without SASL (auth byte 0), which is what insecure clusters expect
	// from clients holding no tokens.
	SASL []SaslMechanism
	// RequireSASL refuses a server that answers SASL with a switch to SIMPLE.
	RequireSASL bool

	DialTimeout time.Duration // 0: DefaultDialTimeout
	CallTimeout time.Duration // 0: DefaultCallTimeout; used when ctx has no deadline
	IdleTimeout time.Duration // 0: DefaultIdleTimeout; <0: never close idle connections
	MaxFrame    int           // 0: DefaultMaxFrame; bounds every length read or written

	// MaxAttempts bounds the tries of one call across addresses
	// (0: two rounds over all addresses).
	MaxAttempts int
	// Backoff is the pause between rounds over the addresses; it doubles each
	// round up to 5s (0: DefaultBackoff).
	Backoff time.Duration
}

func (c Config) withDefaults() (Config, error) {
	if len(c.Addresses) == 0 {
		return c, errors.New("ipc: config has no addresses")
	}
	if c.Protocol == "" {
		return c, errors.New("ipc: config has no protocol name")
	}
	if c.ProtocolVersion == 0 {
		c.ProtocolVersion = 1
	}
	if c.User == "" {
		c.User = DefaultUser()
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxFrame <= 0 {
		c.MaxFrame = DefaultMaxFrame
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 2 * len(c.Addresses)
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	c.Addresses = append([]string(nil), c.Addresses...)
	c.SASL = append([]SaslMechanism(nil), c.SASL...)
	return c, nil
}

// DefaultUser is the user Hadoop's UserGroupInformation picks for SIMPLE auth:
// HADOOP_USER_NAME if set, else the OS login name.
func DefaultUser() string {
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}
