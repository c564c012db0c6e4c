//go:build bench

package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// A simulated NodeManager: it registers with the real ResourceManager over the ResourceTracker
// protocol and heartbeats at the interval the RM asks for, reporting its containers (RUNNING,
// then COMPLETE with their exit status); it serves ContainerManagementProtocol on a loopback
// address of its own, checking each caller's NMToken against the NM master key the RM sent it.
// A task's container runs no process: a simulated launcher (scalesim_launcher_test.go) speaks
// the real rendezvous in its place. The AM's container runs the real `tfyarn am`.

type simNode struct {
	sim  *simCluster
	id   *hadoopyarn.NodeIdProto
	addr string // host:port, the NodeId
	rpc  *ipc.Client
	srv  *rpcServer

	mu           sync.Mutex
	nmKeys       map[int32][]byte // NM master keys by id: NMTokens are checked against them
	containerKey *masterKey
	nmKey        *masterKey
	responseID   int32
	interval     time.Duration
	containers   map[string]*simContainer
	nextPort     int // the next port a launcher on this node "reserves"
}

// simContainer is one container as the node reports it.
type simContainer struct {
	id     *hadoopyarn.ContainerIdProto
	name   string
	size   *hadoopyarn.ResourceProto
	done   bool
	exit   int32
	diag   string
	cancel context.CancelFunc // stops its launcher or AM process
}

func newSimNode(sim *simCluster, host string, port int) *simNode {
	return &simNode{
		sim:        sim,
		id:         &hadoopyarn.NodeIdProto{Host: proto.String(host), Port: proto.Int32(int32(port))},
		addr:       net.JoinHostPort(host, strconv.Itoa(port)),
		nmKeys:     map[int32][]byte{},
		interval:   time.Second,
		containers: map[string]*simContainer{},
		nextPort:   30000,
	}
}

// start listens, registers and heartbeats until ctx ends.
func (n *simNode) start(ctx context.Context) error {
	ln, err := net.Listen("tcp", n.addr)
	if err != nil {
		return fmt.Errorf("simulated NodeManager %s: %w", n.addr, err)
	}
	n.srv = &rpcServer{ln: ln, handle: n.handle, passwordsOf: n.nmTokenPasswords}
	go n.srv.serve()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	n.rpc, err = ipc.NewClient(ipc.Config{
		Addresses: []string{n.sim.tracker}, Protocol: resourceTrackerProtocol, User: n.sim.serverUser, IdleTimeout: -1,
	})
	if err != nil {
		return err
	}
	if err := n.register(ctx); err != nil {
		return err
	}
	go n.heartbeats(ctx)
	return nil
}

func (n *simNode) register(ctx context.Context) error {
	req := encodeRegister(n.id, int32(n.sim.httpPort), yarn.NewResource(n.sim.nodeMemoryMiB, n.sim.nodeVCores, nil), n.sim.hadoopVersion)
	resp := &emptypb.Empty{}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := n.rpc.Call(cctx, "registerNodeManager", rawMessage(req), resp); err != nil {
		return fmt.Errorf("simulated NodeManager %s: registering: %w", n.addr, err)
	}
	a, err := decodeRegisterAnswer(rawBytes(resp))
	if err != nil {
		return err
	}
	if a.Action != actionNormal {
		return fmt.Errorf("simulated NodeManager %s: the ResourceManager answered action %d: %s", n.addr, a.Action, a.Diagnostics)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.takeKeys(a)
	n.responseID = 0
	return nil
}

// takeKeys keeps the master keys an answer carries (under mu).
func (n *simNode) takeKeys(a trackerAnswer) {
	if a.ContainerKey != nil {
		n.containerKey = a.ContainerKey
	}
	if a.NMKey != nil {
		n.nmKey = a.NMKey
		n.nmKeys[a.NMKey.ID] = a.NMKey.Bytes
	}
}

// nmTokenPasswords are the passwords an NMToken may have: one per NM master key this node
// holds (the identifier's own encoding of its key id differs between Hadoop releases).
func (n *simNode) nmTokenPasswords(identifier []byte) ([][]byte, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.nmKeys) == 0 {
		return nil, errors.New("no NM master key from the ResourceManager yet")
	}
	var out [][]byte
	for _, key := range n.nmKeys {
		out = append(out, nmTokenPassword(identifier, key))
	}
	return out, nil
}

func (n *simNode) heartbeats(ctx context.Context) {
	for {
		n.mu.Lock()
		wait := n.interval
		n.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		start := time.Now()
		err := n.heartbeat(ctx)
		n.sim.heartbeatDone(time.Since(start), err)
		if err != nil && ctx.Err() == nil {
			n.sim.logf("simulated NodeManager %s: heartbeat: %v", n.addr, err)
		}
	}
}

func (n *simNode) heartbeat(ctx context.Context) error {
	n.mu.Lock()
	hb := heartbeat{Node: n.id, ResponseID: n.responseID, ContainerKey: n.containerKey, NMKey: n.nmKey, HealthReportT: time.Now().UnixMilli()}
	for _, c := range n.containers {
		hb.Containers = append(hb.Containers, c.status())
	}
	n.mu.Unlock()
	resp := &emptypb.Empty{}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := n.rpc.Call(cctx, "nodeHeartbeat", rawMessage(hb.encode()), resp); err != nil {
		return err
	}
	a, err := decodeHeartbeatAnswer(rawBytes(resp))
	if err != nil {
		return err
	}
	switch a.Action {
	case actionResync:
		return n.register(ctx)
	case actionShutdown:
		return fmt.Errorf("the ResourceManager shut this node down: %s", a.Diagnostics)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.takeKeys(a)
	n.responseID = a.ResponseID
	if a.IntervalMS > 0 {
		n.interval = time.Duration(a.IntervalMS) * time.Millisecond
	}
	for _, id := range a.Cleanup {
		if c := n.containers[yarn.FormatContainerID(id)]; c != nil && !c.done {
			c.finish(-106, "stopped by the ResourceManager") // KILLED_BY_RESOURCEMANAGER
		}
	}
	for _, id := range a.RemoveFromNM {
		if c := n.containers[yarn.FormatContainerID(id)]; c != nil && c.done {
			delete(n.containers, c.name)
		}
	}
	for _, app := range a.AppsToCleanup {
		n.cleanupApp(app)
	}
	return nil
}

// cleanupApp forgets an ended application's containers, stopping what still runs (under mu).
func (n *simNode) cleanupApp(app *hadoopyarn.ApplicationIdProto) {
	for name, c := range n.containers {
		a := c.id.GetAppAttemptId().GetApplicationId()
		if a.GetId() == app.GetId() && a.GetClusterTimestamp() == app.GetClusterTimestamp() {
			if !c.done {
				c.finish(-106, "its application ended")
			}
			delete(n.containers, name)
		}
	}
}

func (c *simContainer) status() *hadoopyarn.ContainerStatusProto {
	st := &hadoopyarn.ContainerStatusProto{
		ContainerId: c.id,
		State:       hadoopyarn.ContainerStateProto_C_RUNNING.Enum(),
		Capability:  c.size,
		Diagnostics: proto.String(""),
	}
	if c.done {
		st.State = hadoopyarn.ContainerStateProto_C_COMPLETE.Enum()
		st.ExitStatus = proto.Int32(c.exit)
		st.Diagnostics = proto.String(c.diag)
	}
	return st
}

// finish marks the container complete (under its node's mu) and stops what runs in it.
func (c *simContainer) finish(exit int32, diag string) {
	if c.done {
		return
	}
	c.done, c.exit, c.diag = true, exit, diag
	if c.cancel != nil {
		c.cancel()
	}
}

// ended is called by a container's launcher or AM process when it ends.
func (n *simNode) ended(name string, exit int32, diag string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if c := n.containers[name]; c != nil {
		c.finish(exit, diag)
	}
}

// handle serves ContainerManagementProtocol.
func (n *simNode) handle(method string, body []byte) ([]byte, error) {
	switch method {
	case "startContainers":
		req := &hadoopyarn.StartContainersRequestProto{}
		if err := proto.Unmarshal(body, req); err != nil {
			return nil, err
		}
		return proto.Marshal(n.startContainers(req))
	case "stopContainers":
		req := &hadoopyarn.StopContainersRequestProto{}
		if err := proto.Unmarshal(body, req); err != nil {
			return nil, err
		}
		resp := &hadoopyarn.StopContainersResponseProto{}
		for _, id := range req.GetContainerId() {
			n.ended(yarn.FormatContainerID(id), -105, "Container killed by the ApplicationMaster.") // KILLED_BY_APPMASTER
			resp.SucceededRequests = append(resp.SucceededRequests, id)
		}
		return proto.Marshal(resp)
	case "getContainerStatuses":
		req := &hadoopyarn.GetContainerStatusesRequestProto{}
		if err := proto.Unmarshal(body, req); err != nil {
			return nil, err
		}
		resp := &hadoopyarn.GetContainerStatusesResponseProto{}
		n.mu.Lock()
		for _, id := range req.GetContainerId() {
			if c := n.containers[yarn.FormatContainerID(id)]; c != nil {
				resp.Status = append(resp.Status, c.status())
			}
		}
		n.mu.Unlock()
		return proto.Marshal(resp)
	}
	return nil, fmt.Errorf("the simulated NodeManager does not serve %s", method)
}

func (n *simNode) startContainers(req *hadoopyarn.StartContainersRequestProto) *hadoopyarn.StartContainersResponseProto {
	resp := &hadoopyarn.StartContainersResponseProto{}
	for _, r := range req.GetStartContainerRequest() {
		id, size, err := containerOfToken(r.GetContainerToken().GetIdentifier())
		if err == nil {
			err = n.launch(id, size, r.GetContainerLaunchContext())
		}
		if err != nil {
			resp.FailedRequests = append(resp.FailedRequests, &hadoopyarn.ContainerExceptionMapProto{
				ContainerId: id,
				Exception:   &hadoopyarn.SerializedExceptionProto{Message: proto.String(err.Error())},
			})
			continue
		}
		resp.SucceededRequests = append(resp.SucceededRequests, id)
	}
	return resp
}

// launch records the container RUNNING and starts what stands in for its process.
func (n *simNode) launch(id *hadoopyarn.ContainerIdProto, size *hadoopyarn.ResourceProto, clc *hadoopyarn.ContainerLaunchContextProto) error {
	name := yarn.FormatContainerID(id)
	ctx, cancel := context.WithCancel(n.sim.ctx)
	c := &simContainer{id: id, name: name, size: size, cancel: cancel}
	n.mu.Lock()
	if n.containers[name] != nil {
		n.mu.Unlock()
		cancel()
		return errors.New("container " + name + " is already started")
	}
	n.containers[name] = c
	port := n.nextPort
	n.nextPort++
	n.mu.Unlock()
	env := map[string]string{}
	for _, kv := range clc.GetEnvironment() {
		env[kv.GetKey()] = kv.GetValue()
	}
	if isAMContainer(clc) {
		return n.sim.startAM(ctx, n, name, env, clc)
	}
	n.sim.taskStarted()
	go n.sim.runLauncher(ctx, n, name, port, env, clc.GetTokens())
	return nil
}
