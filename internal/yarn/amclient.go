package yarn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/pause"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// ApplicationMasterProtocol is the RM's protocol for ApplicationMasters,
// served at yarn.resourcemanager.scheduler.address.
const ApplicationMasterProtocol = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB"

// Java exception classes of the AM protocol that the client acts on.
const (
	ApplicationMasterNotRegisteredException  = "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException"
	InvalidApplicationMasterRequestException = "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException"
)

// Exceptions with which the RM refuses the resource requests an allocate
// call carries (Hadoop's SchedulerUtils and ApplicationMasterService): a
// label that does not exist or that the queue may not use, a shape larger
// than the maximum allocation, a bad blacklist. Sending the same asks again
// gets the same answer.
const (
	InvalidResourceRequestException          = "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException"
	InvalidLabelResourceRequestException     = "org.apache.hadoop.yarn.exceptions.InvalidLabelResourceRequestException"
	InvalidResourceBlacklistRequestException = "org.apache.hadoop.yarn.exceptions.InvalidResourceBlacklistRequestException"
	SchedulerInvalidResoureRequestException  = "org.apache.hadoop.yarn.exceptions.SchedulerInvalidResoureRequestException" // sic
)

var refusalClasses = []string{
	InvalidResourceRequestException, InvalidLabelResourceRequestException,
	InvalidResourceBlacklistRequestException, SchedulerInvalidResoureRequestException,
}

// RequestRefusedError is an allocate the RM refused because of what it
// asked for (see the exceptions above): not a lost RM, and not worth
// retrying. Class and Message are the RM's exception.
type RequestRefusedError struct {
	Class   string
	Message string
	Err     error
}

func (e *RequestRefusedError) Error() string {
	return fmt.Sprintf("yarn: the ResourceManager refused the request: %s: %s", e.Class[strings.LastIndex(e.Class, ".")+1:], e.Message)
}

func (e *RequestRefusedError) Unwrap() error { return e.Err }

// refusal returns err as a *RequestRefusedError when it is one of the
// refusal exceptions, nil otherwise.
func refusal(err error) *RequestRefusedError {
	var re *ipc.RemoteError
	if !errors.As(err, &re) {
		return nil
	}
	for _, class := range refusalClasses {
		if ipc.IsClass(err, class) {
			return &RequestRefusedError{Class: class, Message: re.Message, Err: err}
		}
	}
	// An RM whose placement-constraints handler is "disabled" refuses
	// every allocate carrying SchedulingRequests with a bare YarnException
	// (Hadoop's DisabledPlacementProcessor): the same call would be refused
	// again, so it is a refusal, not a lost RM.
	if strings.Contains(re.Message, PlacementConstraintsHandlerKey) {
		return &RequestRefusedError{Class: re.Class, Message: re.Message, Err: err}
	}
	return nil
}

// PlacementConstraintsHandlerKey is the RM's setting that places
// SchedulingRequests ("scheduler" or "placement-processor"; the default,
// "disabled", refuses them).
const PlacementConstraintsHandlerKey = "yarn.resourcemanager.placement-constraints.handler"

// ErrResponseIDMismatch marks an allocate the RM refused because its
// response_id did not follow the RM's last response: another process is
// heartbeating for the same attempt, or this one lost track. Resending with
// the same id cannot fix it.
var ErrResponseIDMismatch = errors.New("yarn: allocate response_id out of step with the ResourceManager")

// AMOptions tune an AMRMClient. Zero values take ipc's defaults.
type AMOptions struct {
	// Protection lists acceptable hadoop.rpc.protection levels; empty
	// accepts whatever the RM asks for. NewAMRMClient fills it from the
	// configuration.
	Protection  []string
	DialTimeout time.Duration
	MaxAttempts int           // tries of one call across the RM addresses
	Backoff     time.Duration // pause between rounds over the addresses

	// FinishAttempts bounds the finishApplicationMaster calls made while the
	// RM has not yet unregistered the attempt (0: 60).
	FinishAttempts int
	// FinishBackoff is the first pause between them, doubling to 2s (0:
	// 20ms). Short at first: an RM usually unregisters the attempt within
	// tens of milliseconds, and every job's wall time waits for it (Hadoop's
	// AMRMClient sleeps 100ms, most of that idle).
	FinishBackoff time.Duration
}

// rpcCaller is what the clients need of an *ipc.Client; unit tests fake it.
type rpcCaller interface {
	Call(ctx context.Context, method string, req, resp proto.Message) error
	Addr() string
	Close() error
}

// AMRMClient is an ApplicationMaster's connection to the RM's scheduler
// service: register, heartbeat (allocate), finish. It authenticates with the
// AMRMToken (TOKEN/DIGEST-MD5, mandatory even on insecure clusters), swaps in
// the new AMRMToken when the RM rolls its master key, and caches the NMTokens
// the RM hands out. Calls are serialised: the heartbeat protocol is a
// sequence (each allocate names the response it follows).
type AMRMClient struct {
	addrs []string
	opts  AMOptions
	dial  func(tok security.Token) (rpcCaller, error)

	callMu sync.Mutex // one RM exchange at a time

	mu         sync.Mutex // guards the fields below against NMToken/Token readers
	rpc        rpcCaller
	token      security.Token
	responseID int32
	reg        *hadoopyarn.RegisterApplicationMasterRequestProto // replayed on re-register
	nmTokens   map[string]security.Token                         // by NodeId host:port
	closed     bool

	// excluded are the hosts Exclude named, in order; unsent counts the
	// last of them the RM has not heard yet (blacklist additions).
	excluded []string
	unsent   int
}

// Exclude adds hosts to the application attempt's blacklist: the RM
// allocates none of its containers there. The next allocate call carries
// them (a failed call, the one after it); after re-registering, the RM
// hears every host again, as it forgot them with the attempt's asks.
func (c *AMRMClient) Exclude(hosts ...string) {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	for _, h := range hosts {
		if h != "" && !slices.Contains(c.excluded, h) {
			c.excluded = append(c.excluded, h)
			c.unsent++
		}
	}
}

// blacklistRequest is what the next allocate call tells of the blacklist:
// the hosts not sent yet, or every host when all is set. Under callMu.
func (c *AMRMClient) blacklistRequest(all bool) *hadoopyarn.ResourceBlacklistRequestProto {
	hosts := c.excluded[len(c.excluded)-c.unsent:]
	if all {
		hosts = c.excluded
	}
	if len(hosts) == 0 {
		return nil
	}
	return &hadoopyarn.ResourceBlacklistRequestProto{BlacklistAdditions: slices.Clone(hosts)}
}

// NewAMRMClient reaches the scheduler addresses conf names (every RM of an
// HA pair, failing over on StandbyException) with the AMRMToken of creds
// (usually LoadContainerCredentials) and the configured RPC protection.
func NewAMRMClient(conf *hadoopconf.Config, creds *security.Credentials, opts AMOptions) (*AMRMClient, error) {
	addrs, err := conf.RMAddresses(hadoopconf.RMScheduler)
	if err != nil {
		return nil, fmt.Errorf("yarn: scheduler address: %w", err)
	}
	tok, err := AMRMToken(creds)
	if err != nil {
		return nil, err
	}
	if opts.Protection == nil {
		if opts.Protection, err = conf.RPCProtection(); err != nil {
			return nil, fmt.Errorf("yarn: %w", err)
		}
	}
	return NewAMRMClientAt(addrs, tok, opts)
}

// NewAMRMClientAt reaches the scheduler at explicit addresses with tok.
// It does not connect until the first call.
func NewAMRMClientAt(addrs []string, tok security.Token, opts AMOptions) (*AMRMClient, error) {
	if len(addrs) == 0 {
		return nil, errors.New("yarn: no scheduler address")
	}
	c := &AMRMClient{addrs: append([]string(nil), addrs...), opts: opts, nmTokens: map[string]security.Token{}}
	c.dial = c.dialRPC
	return c, c.init(tok)
}

func (c *AMRMClient) init(tok security.Token) error {
	rpc, err := c.dial(tok)
	if err != nil {
		return err
	}
	c.rpc, c.token = rpc, tok.Clone()
	return nil
}

func (c *AMRMClient) dialRPC(tok security.Token) (rpcCaller, error) {
	rpc, err := ipc.NewClient(ipc.Config{
		Addresses: c.addrs,
		Protocol:  ApplicationMasterProtocol,
		// One token: its service names the scheduler only loosely (often
		// empty for unmanaged AMs, an IP:port otherwise), so don't match it.
		SASL:        []ipc.SaslMechanism{&ipc.DigestMD5{Tokens: []security.Token{tok}, Services: c.addrs, Protection: c.opts.Protection}},
		RequireSASL: true,
		DialTimeout: c.opts.DialTimeout,
		MaxAttempts: c.opts.MaxAttempts,
		Backoff:     c.opts.Backoff,
	})
	if err != nil {
		return nil, fmt.Errorf("yarn: %w", err)
	}
	return rpc, nil
}

// Registration is what the RM tells an AM when it registers.
type Registration struct {
	MaxCapability                  *hadoopyarn.ResourceProto           // largest container the RM grants
	Queue                          string                              // full queue path, e.g. root.default
	ResourceTypes                  []*hadoopyarn.ResourceTypeInfoProto // types the RM knows: ask only for these
	ContainersFromPreviousAttempts []*hadoopyarn.ContainerProto        // kept across attempts, if asked for
	Raw                            *hadoopyarn.RegisterApplicationMasterResponseProto
}

// Register announces the AM (registerApplicationMaster). host, rpcPort and
// trackingURL are shown to users; the tracking URL is proxied by the RM.
// NMTokens from previous attempts go into the NMToken cache.
func (c *AMRMClient) Register(ctx context.Context, host string, rpcPort int32, trackingURL string) (*Registration, error) {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	req := &hadoopyarn.RegisterApplicationMasterRequestProto{
		Host: proto.String(host), RpcPort: proto.Int32(rpcPort), TrackingUrl: proto.String(trackingURL),
	}
	resp, err := c.register(ctx, req)
	if err != nil {
		return nil, err
	}
	return &Registration{
		MaxCapability:                  resp.GetMaximumCapability(),
		Queue:                          resp.GetQueue(),
		ResourceTypes:                  resp.GetResourceTypes(),
		ContainersFromPreviousAttempts: resp.GetContainersFromPreviousAttempts(),
		Raw:                            resp,
	}, nil
}

// register must run under callMu.
func (c *AMRMClient) register(ctx context.Context, req *hadoopyarn.RegisterApplicationMasterRequestProto) (*hadoopyarn.RegisterApplicationMasterResponseProto, error) {
	resp := &hadoopyarn.RegisterApplicationMasterResponseProto{}
	if err := c.call(ctx, "registerApplicationMaster", req, resp); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reg = req
	// A (re-)registered attempt starts a new heartbeat sequence.
	c.responseID = 0
	c.cacheNMTokensLocked(resp.GetNmTokensFromPreviousAttempts())
	return resp, nil
}

// Allocation is one heartbeat's answer.
type Allocation struct {
	*hadoopyarn.AllocateResponseProto
	// Reregistered is true when the RM had forgotten the attempt (RM restart
	// or failover) and the client registered again before this heartbeat.
	// The RM then knows none of the outstanding asks: the caller must send
	// its whole ask table again on the next Allocate.
	Reregistered bool
}

// Allocate is one heartbeat (allocate): it sends asks and releases and
// returns new containers, completed container statuses, node updates, etc.
//
// Contract for asks (the caller's ask table; YARN-1902): each
// ResourceRequestProto states the absolute number of containers still
// outstanding for its key (priority, allocation_request_id, resource_name,
// capability), not an increment. Send a key again only when its count
// changes, set it to 0 once its containers arrived, and keep one
// allocation_request_id (one container shape) per task group. Resending a
// stale count over-allocates; surplus containers must be released. An empty
// asks slice is a plain heartbeat.
//
// The client keeps response_id itself. If the RM had forgotten the attempt
// (ApplicationMasterNotRegisteredException), Allocate registers again with
// the last Register's arguments and retries once (see
// Allocation.Reregistered). A response_id the RM refuses is returned as an
// error matching ErrResponseIDMismatch; asks the RM refuses (a label that
// does not exist, a shape it cannot grant) as a *RequestRefusedError. When the response carries a new
// AMRMToken, later calls use it on a fresh connection. A response with
// AMCommand AM_SHUTDOWN tells the AM to exit.
func (c *AMRMClient) Allocate(ctx context.Context, asks []*hadoopyarn.ResourceRequestProto, releases []*hadoopyarn.ContainerIdProto, progress float32) (*Allocation, error) {
	return c.AllocateScheduling(ctx, asks, nil, releases, progress)
}

// AllocateScheduling is Allocate with SchedulingRequests beside the
// ResourceRequests (allocation tags and placement constraints; the RM needs
// yarn.resourcemanager.placement-constraints.handler set). Their contract
// is the asks': num_allocations is the absolute count still outstanding for
// the request's (priority, allocation_request_id), and nothing but that
// count may change once the RM holds it (Hadoop's
// SingleConstraintAppPlacementAllocator refuses the request otherwise). A
// ResourceRequest and a SchedulingRequest may not share a key.
func (c *AMRMClient) AllocateScheduling(ctx context.Context, asks []*hadoopyarn.ResourceRequestProto, scheduling []*hadoopyarn.SchedulingRequestProto, releases []*hadoopyarn.ContainerIdProto, progress float32) (*Allocation, error) {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	c.mu.Lock()
	reg, id := c.reg, c.responseID
	c.mu.Unlock()
	if reg == nil {
		return nil, errors.New("yarn: allocate before registerApplicationMaster")
	}
	out := &Allocation{}
	req := &hadoopyarn.AllocateRequestProto{Ask: asks, SchedulingRequests: scheduling, Release: releases, ResponseId: proto.Int32(id), Progress: proto.Float32(progress),
		BlacklistRequest: c.blacklistRequest(false)}
	resp := &hadoopyarn.AllocateResponseProto{}
	err := c.call(ctx, "allocate", req, resp)
	if ipc.IsClass(err, ApplicationMasterNotRegisteredException) {
		if _, rerr := c.register(ctx, reg); rerr != nil {
			return nil, fmt.Errorf("yarn: re-registering after the RM forgot the attempt: %w", rerr)
		}
		out.Reregistered = true
		req.ResponseId = proto.Int32(0)
		req.BlacklistRequest = c.blacklistRequest(true)
		resp = &hadoopyarn.AllocateResponseProto{}
		err = c.call(ctx, "allocate", req, resp)
	}
	if ipc.IsClass(err, InvalidApplicationMasterRequestException) {
		var re *ipc.RemoteError
		if errors.As(err, &re) && strings.Contains(strings.ToLower(re.Message), "responseid") {
			return nil, fmt.Errorf("%w (sent %d): %w", ErrResponseIDMismatch, req.GetResponseId(), err)
		}
	}
	if r := refusal(err); r != nil {
		return nil, r
	}
	if err != nil {
		return nil, err
	}
	c.unsent = 0
	c.mu.Lock()
	c.responseID = resp.GetResponseId()
	c.cacheNMTokensLocked(resp.GetNmTokens())
	c.mu.Unlock()
	if t := resp.GetAmRmToken(); t != nil {
		if err := c.swapToken(TokenFromProto(t)); err != nil {
			return nil, err
		}
	}
	out.AllocateResponseProto = resp
	return out, nil
}

// swapToken moves to a rolled AMRMToken: the old connection stays
// authenticated with the old key, which the RM retires, so the next call
// must dial again with the new token. Runs under callMu, so no call is in
// flight on the old client.
func (c *AMRMClient) swapToken(tok security.Token) error {
	c.mu.Lock()
	if tok.Service == "" {
		// The RM leaves it empty; Hadoop keeps the old service too.
		tok.Service = c.token.Service
	}
	c.mu.Unlock()
	rpc, err := c.dial(tok)
	if err != nil {
		return fmt.Errorf("yarn: reconnecting with the new AMRMToken: %w", err)
	}
	c.mu.Lock()
	old := c.rpc
	c.rpc, c.token = rpc, tok.Clone()
	c.mu.Unlock()
	return old.Close()
}

// Finish unregisters the AM (finishApplicationMaster) with the final status
// users see. The RM may take a few calls to unregister (it waits for the
// attempt's state machine): Finish repeats the call with backoff until the
// RM says it is unregistered, at most AMOptions.FinishAttempts times and
// within ctx.
func (c *AMRMClient) Finish(ctx context.Context, status hadoopyarn.FinalApplicationStatusProto, diagnostics, trackingURL string) error {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	attempts := c.opts.FinishAttempts
	if attempts <= 0 {
		attempts = 60
	}
	req := &hadoopyarn.FinishApplicationMasterRequestProto{
		FinalApplicationStatus: status.Enum(),
		Diagnostics:            proto.String(diagnostics),
		TrackingUrl:            proto.String(trackingURL),
	}
	for i := 0; ; i++ {
		resp := &hadoopyarn.FinishApplicationMasterResponseProto{}
		err := c.call(ctx, "finishApplicationMaster", req, resp)
		if ipc.IsClass(err, ApplicationMasterNotRegisteredException) {
			c.mu.Lock()
			reg := c.reg
			c.mu.Unlock()
			if reg == nil {
				return err
			}
			// The RM restarted and forgot us: Hadoop's AMRMClient registers
			// again so that the final status is recorded.
			if _, rerr := c.register(ctx, reg); rerr != nil {
				return fmt.Errorf("yarn: re-registering to finish: %w", rerr)
			}
			continue
		}
		if err != nil {
			return err
		}
		if resp.GetIsUnregistered() {
			return nil
		}
		if i+1 >= attempts {
			return fmt.Errorf("yarn: finishApplicationMaster: the RM had not unregistered the attempt after %d calls", attempts)
		}
		if err := pause.For(ctx, c.opts.finishPause(i)); err != nil {
			return fmt.Errorf("yarn: finishApplicationMaster: waiting for the RM to unregister: %w", err)
		}
	}
}

func (c *AMRMClient) call(ctx context.Context, method string, req, resp proto.Message) error {
	c.mu.Lock()
	rpc, closed := c.rpc, c.closed
	c.mu.Unlock()
	if closed {
		return ipc.ErrClosed
	}
	if err := rpc.Call(ctx, method, req, resp); err != nil {
		return &RMError{Method: method, Addr: errAddr(err, rpc.Addr()), Addrs: append([]string(nil), c.addrs...), Err: err}
	}
	return nil
}

func (c *AMRMClient) cacheNMTokensLocked(toks []*hadoopyarn.NMTokenProto) {
	for _, t := range toks {
		if t.GetNodeId() == nil || t.GetToken() == nil {
			continue
		}
		c.nmTokens[FormatNodeID(t.GetNodeId())] = TokenFromProto(t.GetToken())
	}
}

// NMToken returns the cached NMToken for a node. The RM sends one only with
// the first container on each node (and after rolling its keys), so the
// cache is the only place to find it later.
func (c *AMRMClient) NMToken(node *hadoopyarn.NodeIdProto) (security.Token, bool) {
	return c.NMTokenFor(FormatNodeID(node))
}

// NMTokenFor is NMToken by the NodeManager's host:port; it makes
// *AMRMClient an NMTokenSource for ContainerManager.
func (c *AMRMClient) NMTokenFor(addr string) (security.Token, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.nmTokens[addr]
	return t.Clone(), ok
}

// Token returns the AMRMToken in use (the latest one the RM handed out).
func (c *AMRMClient) Token() security.Token {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token.Clone()
}

// Close drops the connection. It does not unregister: call Finish first.
func (c *AMRMClient) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return c.rpc.Close()
}

// finishPause is the pause after finishApplicationMaster call number i
// (from 0) found the attempt not yet unregistered: FinishBackoff (20ms by
// default), doubling, at most 2s.
func (o AMOptions) finishPause(i int) time.Duration {
	d := o.FinishBackoff
	if d <= 0 {
		d = 20 * time.Millisecond
	}
	for ; i > 0 && d < 2*time.Second; i-- {
		d *= 2
	}
	return min(d, 2*time.Second)
}
