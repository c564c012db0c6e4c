package yarn

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// ContainerManagementProtocol is the NodeManager's protocol for starting,
// querying and stopping containers.
const ContainerManagementProtocol = "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB"

// NMTokenSource finds the NMToken for a NodeManager address (NodeId
// host:port). *AMRMClient is one.
type NMTokenSource interface {
	NMTokenFor(addr string) (security.Token, bool)
}

// NMOptions tune a ContainerManager. Zero values take ipc's defaults.
type NMOptions struct {
	// Protection lists acceptable hadoop.rpc.protection levels; empty
	// accepts whatever the NodeManager asks for.
	Protection  []string
	DialTimeout time.Duration
	MaxAttempts int
	Backoff     time.Duration
}

// ContainerManager talks to NodeManagers on behalf of an AM, one cached
// connection per NM address, each authenticated with that node's NMToken.
// It is safe for concurrent use.
type ContainerManager struct {
	tokens NMTokenSource
	opts   NMOptions
	dial   func(addr string, tok security.Token) (rpcCaller, error)

	mu     sync.Mutex
	conns  map[string]*nmConn
	closed bool
}

type nmConn struct {
	rpc   rpcCaller
	token security.Token
}

// NewContainerManager returns a manager that finds NMTokens in tokens.
func NewContainerManager(tokens NMTokenSource, opts NMOptions) *ContainerManager {
	m := &ContainerManager{tokens: tokens, opts: opts, conns: map[string]*nmConn{}}
	m.dial = m.dialRPC
	return m
}

func (m *ContainerManager) dialRPC(addr string, tok security.Token) (rpcCaller, error) {
	rpc, err := ipc.NewClient(ipc.Config{
		Addresses:   []string{addr},
		Protocol:    ContainerManagementProtocol,
		SASL:        []ipc.SaslMechanism{&ipc.DigestMD5{Tokens: []security.Token{tok}, Services: []string{addr}, Protection: m.opts.Protection}},
		RequireSASL: true,
		DialTimeout: m.opts.DialTimeout,
		MaxAttempts: m.opts.MaxAttempts,
		Backoff:     m.opts.Backoff,
	})
	if err != nil {
		return nil, fmt.Errorf("yarn: %w", err)
	}
	return rpc, nil
}

// client returns addr's connection, replacing it when the NMToken changed
// (the RM rolled its NM master key and sent a new token).
func (m *ContainerManager) client(addr string) (rpcCaller, error) {
	tok, ok := m.tokens.NMTokenFor(addr)
	if !ok {
		return nil, fmt.Errorf("yarn: no NMToken for NodeManager %s (the RM sends it with the first container allocated there)", addr)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ipc.ErrClosed
	}
	if c := m.conns[addr]; c != nil {
		if bytes.Equal(c.token.Identifier, tok.Identifier) && bytes.Equal(c.token.Password, tok.Password) {
			return c.rpc, nil
		}
		c.rpc.Close()
		delete(m.conns, addr)
	}
	rpc, err := m.dial(addr, tok)
	if err != nil {
		return nil, err
	}
	m.conns[addr] = &nmConn{rpc: rpc, token: tok}
	return rpc, nil
}

func (m *ContainerManager) call(ctx context.Context, addr, method string, req, resp proto.Message) error {
	rpc, err := m.client(addr)
	if err == nil {
		err = rpc.Call(ctx, method, req, resp)
	}
	if err != nil {
		return &NMError{Method: method, Addr: addr, Err: err}
	}
	return nil
}

// StartRequest is one container to launch: the container token from the
// allocation (it proves the RM granted this container on this node) and what
// to run in it.
type StartRequest struct {
	ContainerToken *hadoopcommon.TokenProto
	LaunchContext  *hadoopyarn.ContainerLaunchContextProto
}

// StartRequestFor pairs an allocated container with its launch context.
func StartRequestFor(c *hadoopyarn.ContainerProto, clc *hadoopyarn.ContainerLaunchContextProto) StartRequest {
	return StartRequest{ContainerToken: c.GetContainerToken(), LaunchContext: clc}
}

// StartResult reports, per container, what a NodeManager did.
type StartResult struct {
	Started []*hadoopyarn.ContainerIdProto
	Failed  []*ContainerError
	// ServicesMetaData is the NM's auxiliary services' data (e.g. the
	// shuffle port), by service name.
	ServicesMetaData map[string][]byte
}

// StartContainers launches containers on the NodeManager at addr (the
// containers' NodeId host:port). An error means the call itself failed;
// containers the NM refused (bad token, already started, ...) are in
// StartResult.Failed, each with its container id and the NM's reason.
func (m *ContainerManager) StartContainers(ctx context.Context, addr string, reqs []StartRequest) (*StartResult, error) {
	req := &hadoopyarn.StartContainersRequestProto{}
	for _, r := range reqs {
		req.StartContainerRequest = append(req.StartContainerRequest, &hadoopyarn.StartContainerRequestProto{
			ContainerLaunchContext: r.LaunchContext,
			ContainerToken:         r.ContainerToken,
		})
	}
	resp := &hadoopyarn.StartContainersResponseProto{}
	if err := m.call(ctx, addr, "startContainers", req, resp); err != nil {
		return nil, err
	}
	res := &StartResult{
		Started:          resp.GetSucceededRequests(),
		Failed:           containerErrors(addr, resp.GetFailedRequests()),
		ServicesMetaData: map[string][]byte{},
	}
	for _, kv := range resp.GetServicesMetaData() {
		res.ServicesMetaData[kv.GetKey()] = kv.GetValue()
	}
	return res, nil
}

// GetContainerStatuses asks the NodeManager at addr about containers;
// unknown or foreign ones come back as ContainerErrors.
func (m *ContainerManager) GetContainerStatuses(ctx context.Context, addr string, ids []*hadoopyarn.ContainerIdProto) ([]*hadoopyarn.ContainerStatusProto, []*ContainerError, error) {
	resp := &hadoopyarn.GetContainerStatusesResponseProto{}
	if err := m.call(ctx, addr, "getContainerStatuses", &hadoopyarn.GetContainerStatusesRequestProto{ContainerId: ids}, resp); err != nil {
		return nil, nil, err
	}
	return resp.GetStatus(), containerErrors(addr, resp.GetFailedRequests()), nil
}

// StopContainers stops containers on the NodeManager at addr and returns the
// ones it stopped; refusals come back as ContainerErrors.
func (m *ContainerManager) StopContainers(ctx context.Context, addr string, ids []*hadoopyarn.ContainerIdProto) ([]*hadoopyarn.ContainerIdProto, []*ContainerError, error) {
	resp := &hadoopyarn.StopContainersResponseProto{}
	if err := m.call(ctx, addr, "stopContainers", &hadoopyarn.StopContainersRequestProto{ContainerId: ids}, resp); err != nil {
		return nil, nil, err
	}
	return resp.GetSucceededRequests(), containerErrors(addr, resp.GetFailedRequests()), nil
}

// Close drops every NodeManager connection.
func (m *ContainerManager) Close() error {
	m.mu.Lock()
	conns := m.conns
	m.conns, m.closed = map[string]*nmConn{}, true
	m.mu.Unlock()
	for _, c := range conns {
		c.rpc.Close()
	}
	return nil
}
