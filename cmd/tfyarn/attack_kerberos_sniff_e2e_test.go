//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/connect"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// TestE2EAttackKerberosSniffRendezvous: issue 18 point 3's last sentence,
// on the Kerberos cluster, where a --keytab job's AM obtains fresh HDFS
// delegation tokens and hands them to the running tasks' launchers. Anyone
// who can read the network between AM and launchers (here: a packet socket
// on the loopback interface, where AM and launchers talk) must see neither
// those tokens' passwords nor a task's stderr tail in clear text (raw,
// base64 or hex). The test checks that it saw the AM's traffic, that the
// task's token file really changed (a refresh travelled), and that the
// stderr tail reached the AM (the ResourceManager's diagnostics name it).
//
//	go test -tags e2e -run '^TestE2EAttackKerberosSniffRendezvous$' ./cmd/tfyarn/
func TestE2EAttackKerberosSniffRendezvous(t *testing.T) {
	t.Parallel()
	c := clustertest.RequireKerberos(t)
	bin := clustertest.BuildTfyarn(t)
	k := c.Kerberos
	dir := clustertest.ContainerDir(t)
	release := filepath.Join(dir, "release")
	stderrMarker := "stderr-tail-" + randomHex(t)
	name := "e2e-attack-krb-sniff-" + randomHex(t)
	// The task keeps a copy of its token file each time the launcher
	// rewrites it, until released; then it fails with a stderr line, which
	// its launcher reports to the AM with the exit.
	script := fmt.Sprintf(`n=0; cp "$HADOOP_TOKEN_FILE_LOCATION" %[1]s/tokens.0
while [ ! -e %[2]s ]; do
  if ! cmp -s "$HADOOP_TOKEN_FILE_LOCATION" %[1]s/tokens.$n; then n=$((n+1)); cp "$HADOOP_TOKEN_FILE_LOCATION" %[1]s/tokens.$n; fi
  sleep 0.5
done
echo %[3]s >&2; exit 3`, dir, release, stderrMarker)
	// The client is stopped once the job runs: its status requests to the
	// AM (the owner's, which carry the stderr tail back) are not what is
	// looked at; only the launchers then talk to the AM.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--principal", k.Principal, "--keytab", k.Keytab,
		"run", "--name", name, "--worker", "1c,256m", "--output", "json", "--", "sh", "-c", script)
	cmd.Env = c.Env()
	require.NoError(t, cmd.Start())
	appID := waitForRunning(t, c, bin, name)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o644) })
	pid := amPID(t, appID)
	ports := listeningPorts(t, pid)
	require.NotEmpty(t, ports, "the AM (pid %d) listens on no TCP port", pid)
	sniff := startLoopbackSniffer(t, ports)

	// Wait until the launcher rewrote the task's token file (the AM's
	// refresh from the keytab travelled over the sniffed connection).
	deadline := time.Now().Add(90 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "tokens.1")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the task's token file was not rewritten within 90s (no refresh reached its launcher)")
		time.Sleep(500 * time.Millisecond)
	}
	require.NoError(t, os.WriteFile(release, nil, 0o644))
	report := waitForFinalReport(t, c, appID)
	captured := sniff.stop()
	t.Logf("AM of %s: pid %d, ports %v; %d bytes of its TCP payload captured", appID, pid, ports, len(captured))
	require.Greater(t, len(captured), 1000, "the sniffer saw the AM's traffic")
	require.Equal(t, "FAILED", yarn.FinalStatusName(report.GetFinalApplicationStatus()))
	require.Contains(t, report.GetDiagnostics(), stderrMarker, "the task's stderr tail reached the AM")

	first, err := security.ReadCredentialsFile(filepath.Join(dir, "tokens.0"))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, tok := range first.TokensOfKind(security.KindHDFSDelegation) {
		seen[string(tok.Token.Password)] = true
	}
	copies, err := filepath.Glob(filepath.Join(dir, "tokens.*"))
	require.NoError(t, err)
	sort.Strings(copies)
	var fresh [][]byte
	for _, p := range copies[1:] {
		creds, err := security.ReadCredentialsFile(p)
		require.NoError(t, err)
		for _, tok := range creds.TokensOfKind(security.KindHDFSDelegation) {
			if !seen[string(tok.Token.Password)] {
				seen[string(tok.Token.Password)] = true
				fresh = append(fresh, tok.Token.Password)
			}
		}
	}
	require.NotEmpty(t, fresh, "a refreshed HDFS delegation token in the task's token file")

	secrets := map[string][]byte{"the stderr tail": []byte(stderrMarker)}
	for i, pw := range fresh {
		for form, b := range map[string][]byte{
			"raw": pw, "base64": []byte(base64.StdEncoding.EncodeToString(pw)), "base64url": []byte(base64.RawURLEncoding.EncodeToString(pw)),
			"hex": []byte(hex.EncodeToString(pw)),
		} {
			secrets[fmt.Sprintf("refreshed token %d's password (%s)", i, form)] = b
		}
	}
	// Also what base64 or hex strings in the capture decode to: a token
	// sent inside a base64 credentials blob shows only once decoded.
	corpus := append(append([]byte(nil), captured...), decodedRuns(captured)...)
	var leaked []string
	for what, b := range secrets {
		if bytes.Contains(corpus, b) {
			leaked = append(leaked, what)
		}
	}
	sort.Strings(leaked)
	require.Empty(t, leaked, "travelled in clear text between the AM and a launcher")
}

var (
	base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}={0,2}`)
	hexRun    = regexp.MustCompile(`(?:[0-9a-fA-F]{2}){8,}`)
)

// decodedRuns is the concatenation of what every base64 (standard or URL
// alphabet, padded or not) and hex run of b decodes to.
func decodedRuns(b []byte) []byte {
	var out []byte
	for _, run := range base64Run.FindAll(b, -1) {
		s := strings.TrimRight(string(run), "=")
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			if d, err := enc.DecodeString(s[:len(s)-len(s)%4]); err == nil {
				out = append(out, d...)
			}
			if d, err := enc.DecodeString(s); err == nil {
				out = append(out, d...)
			}
		}
	}
	for _, run := range hexRun.FindAll(b, -1) {
		if d, err := hex.DecodeString(string(run)); err == nil {
			out = append(out, d...)
		}
	}
	return out
}

// waitForFinalReport polls the ResourceManager (as alice, by her ticket;
// never the AM) until appID has ended, at most 2 minutes.
func waitForFinalReport(t *testing.T, c *clustertest.Cluster, appID string) *hadoopyarn.ApplicationReportProto {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	login, err := security.LoginKerberos(ctx, security.KerberosOptions{CCache: c.Kerberos.CCache, Krb5Conf: c.Kerberos.Krb5Config})
	require.NoError(t, err)
	rm, err := connect.RM(conf, login, yarn.ClientOptions{})
	require.NoError(t, err)
	defer rm.Close()
	id, err := yarn.ParseApplicationID(appID)
	require.NoError(t, err)
	for {
		r, err := rm.GetApplicationReport(ctx, id)
		require.NoError(t, err)
		switch yarn.AppStateName(r.GetYarnApplicationState()) {
		case "FINISHED", "FAILED", "KILLED":
			return r
		}
		require.NoError(t, ctx.Err(), "%s did not end within 2m", appID)
		time.Sleep(500 * time.Millisecond)
	}
}

// loopbackSniffer keeps, in capture order, the TCP payload of every
// packet that leaves the loopback interface from or to one of ports.
type loopbackSniffer struct {
	fd      int
	mu      sync.Mutex
	buf     bytes.Buffer
	once    sync.Once
	done    chan struct{} // closed by stop
	stopped chan struct{} // closed when the reader has returned
}

// maxSniffBytes bounds what the sniffer keeps.
const maxSniffBytes = 64 << 20

// startLoopbackSniffer opens a packet socket on lo (root only) and reads
// until stop.
func startLoopbackSniffer(t *testing.T, ports []int) *loopbackSniffer {
	t.Helper()
	lo, err := net.InterfaceByName("lo")
	require.NoError(t, err)
	proto := int(htons(syscall.ETH_P_ALL))
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, proto)
	require.NoError(t, err, "a packet socket on lo (the test runs as root, as CI does)")
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrLinklayer{Protocol: htons(syscall.ETH_P_ALL), Ifindex: lo.Index}))
	tv := syscall.NsecToTimeval((200 * time.Millisecond).Nanoseconds())
	require.NoError(t, syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv))
	want := map[uint16]bool{}
	for _, p := range ports {
		want[uint16(p)] = true
	}
	s := &loopbackSniffer{fd: fd, done: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(s.stopped)
		pkt := make([]byte, 1<<17)
		for {
			select {
			case <-s.done:
				return
			default:
			}
			n, from, err := syscall.Recvfrom(fd, pkt, 0)
			if err != nil {
				continue // the receive timeout: look at done again
			}
			// Each packet shows up twice on lo; keep the outgoing copy.
			if ll, ok := from.(*syscall.SockaddrLinklayer); !ok || ll.Pkttype != syscall.PACKET_OUTGOING {
				continue
			}
			if payload, ok := tcpPayload(pkt[:n], want); ok && len(payload) > 0 {
				s.mu.Lock()
				if s.buf.Len()+len(payload) <= maxSniffBytes {
					s.buf.Write(payload)
				}
				s.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// stop ends the capture (the reader notices within its receive timeout)
// and returns what it kept.
func (s *loopbackSniffer) stop() []byte {
	s.once.Do(func() {
		close(s.done)
		<-s.stopped
		syscall.Close(s.fd)
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.buf.Bytes()...)
}

// tcpPayload is the TCP payload of an Ethernet-framed IPv4 or IPv6 packet
// (lo's framing) whose source or destination port is in ports.
func tcpPayload(frame []byte, ports map[uint16]bool) ([]byte, bool) {
	if len(frame) < 14 {
		return nil, false
	}
	var tcp []byte
	switch binary.BigEndian.Uint16(frame[12:14]) {
	case 0x0800:
		ip := frame[14:]
		if len(ip) < 20 || ip[9] != syscall.IPPROTO_TCP {
			return nil, false
		}
		ihl := int(ip[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(ip[2:4]))
		if ihl < 20 || total > len(ip) || ihl > total {
			return nil, false
		}
		tcp = ip[ihl:total]
	case 0x86dd:
		ip := frame[14:]
		if len(ip) < 40 || ip[6] != syscall.IPPROTO_TCP {
			return nil, false
		}
		plen := int(binary.BigEndian.Uint16(ip[4:6]))
		if 40+plen > len(ip) {
			return nil, false
		}
		tcp = ip[40 : 40+plen]
	default:
		return nil, false
	}
	if len(tcp) < 20 {
		return nil, false
	}
	src, dst := binary.BigEndian.Uint16(tcp[0:2]), binary.BigEndian.Uint16(tcp[2:4])
	if !ports[src] && !ports[dst] {
		return nil, false
	}
	off := int(tcp[12]>>4) * 4
	if off < 20 || off > len(tcp) {
		return nil, false
	}
	return tcp[off:], true
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
