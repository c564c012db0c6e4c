//go:build bench

package bench

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
)

// callTimer is a TCP proxy between the AM and the ResourceManager's scheduler port that reads
// the Hadoop RPC frames passing through (the connection is not wrapped: qop authentication) and
// times each call from its request to its response, by method: the AM's allocate round trips
// as the AM sees them, the RM's share and the network's.
type callTimer struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	calls map[string][]time.Duration
}

func newCallTimer(target string) (*callTimer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &callTimer{ln: ln, target: target, calls: map[string][]time.Duration{}}
	go p.accept()
	return p, nil
}

func (p *callTimer) addr() string { return p.ln.Addr().String() }

func (p *callTimer) close() { p.ln.Close() }

// take returns the durations of method's calls so far and forgets them.
func (p *callTimer) take(method string) []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.calls[method]
	delete(p.calls, method)
	return d
}

func (p *callTimer) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.relay(c)
	}
}

type pendingCall struct {
	method string
	sent   time.Time
}

func (p *callTimer) relay(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	var mu sync.Mutex
	pending := map[int32]pendingCall{}
	go func() {
		defer server.Close()
		r := bufio.NewReader(client)
		pre := make([]byte, 7)
		if _, err := io.ReadFull(r, pre); err != nil {
			return
		}
		if _, err := server.Write(pre); err != nil {
			return
		}
		_ = eachFrame(r, server, func(frame []byte) {
			h := &hadoopcommon.RpcRequestHeaderProto{}
			rest, err := consumeMessage(frame, h)
			if err != nil || h.GetCallId() < 0 {
				return
			}
			req := &hadoopcommon.RequestHeaderProto{}
			if _, err := consumeMessage(rest, req); err == nil {
				mu.Lock()
				pending[h.GetCallId()] = pendingCall{req.GetMethodName(), time.Now()}
				mu.Unlock()
			}
		})
	}()
	_ = eachFrame(bufio.NewReader(server), client, func(frame []byte) {
		h := &hadoopcommon.RpcResponseHeaderProto{}
		if _, err := consumeMessage(frame, h); err != nil {
			return
		}
		id := int32(h.GetCallId())
		mu.Lock()
		c, ok := pending[id]
		delete(pending, id)
		mu.Unlock()
		if ok {
			p.mu.Lock()
			p.calls[c.method] = append(p.calls[c.method], time.Since(c.sent))
			p.mu.Unlock()
		}
	})
}

// eachFrame copies length-prefixed frames from r to w, showing each to see first.
func eachFrame(r io.Reader, w io.Writer, see func([]byte)) error {
	for {
		frame, err := readRPCFrame(r)
		if err != nil {
			return err
		}
		see(frame)
		out := binary.BigEndian.AppendUint32(nil, uint32(len(frame)))
		if _, err := w.Write(append(out, frame...)); err != nil {
			return err
		}
	}
}
