package executor

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/syncbuf"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The test binary doubles as a "TensorFlow server" for the port handoff
// test: run with helperEnv=listen it listens with SO_REUSEPORT on
// TFYARN_TASK_PORT, as TF's gRPC server does with TF_GRPC_REUSE_PORT.
const helperEnv = "TFYARN_EXECUTOR_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "listen":
		os.Exit(helperListen())
	case "alloc", "spin", "sleep":
		os.Exit(helperBusy(os.Getenv(helperEnv)))
	}
	// The launchers of these tests share one copy of tfyarn's Python package rather than each
	// writing one into the package's directory (their working directory).
	dir, err := os.MkdirTemp("", "executor-test-sdk-")
	if err != nil {
		panic(err)
	}
	testSDK = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testSDK is the Config.PythonSDK of newLaunch's launchers.
var testSDK string

func helperListen() int {
	ln, err := reusePortListen("tcp", ":"+os.Getenv(contract.EnvTaskPort))
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	fmt.Println("listening")
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(20 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	c.Close()
	fmt.Println("accepted")
	return 0
}

func reusePortListen(network, addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(context.Background(), network, addr)
}

// waitFor polls until buf contains s.
func waitFor(t *testing.T, buf *syncbuf.Buffer, s string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(buf.String(), s) }, 10*time.Second, 10*time.Millisecond, "waiting for %q in %q", s, buf.String())
}

// am is an in-process AM: a Board behind a rendezvous server.
type am struct {
	board  *rendezvous.Board
	addr   string
	secret []byte
	stop   func() // ends the AM's server, as a killed AM
}

func startAM(t *testing.T, groups ...taskspec.TaskGroup) *am {
	t.Helper()
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	a, _ := startAMWith(t, secret, groups...)
	return a
}

// startAMWith starts an AM with the given secret (the attempts of one job
// share it); stop ends it, as a killed AM.
func startAMWith(t *testing.T, secret []byte, groups ...taskspec.TaskGroup) (a *am, stop func()) {
	t.Helper()
	return startAMServer(t, secret, nil, groups...)
}

// startAMServer is startAMWith with the server's options.
func startAMServer(t *testing.T, secret []byte, opts []rendezvous.Option, groups ...taskspec.TaskGroup) (a *am, stop func()) {
	t.Helper()
	board, err := rendezvous.NewBoard(rendezvous.BoardConfig{Groups: groups, RegistrationTimeout: 30 * time.Second})
	require.NoError(t, err)
	srv, err := rendezvous.NewServer(secret, board, opts...)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx, ln); close(done) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(func() { stop(); board.Close() })
	return &am{board: board, addr: ln.Addr().String(), secret: secret, stop: stop}, stop
}

type launch struct {
	cfg            Config
	stdout, stderr *syncbuf.Buffer
	signals        chan os.Signal
}

// newLaunch is a Config for task against a, with captured output and
// injectable signals.
func (a *am) newLaunch(task taskspec.TaskID, command ...string) *launch {
	l := &launch{stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, signals: make(chan os.Signal, 1)}
	container := "container_test_" + strings.ReplaceAll(task.String(), ":", "_")
	l.cfg = Config{
		Task: task, AMAddress: a.addr, Secret: rendezvous.ContainerKey(a.secret, container),
		Host: "127.0.0.1", ContainerID: container, PythonSDK: testSDK,
		Command: command, Stdout: l.stdout, Stderr: l.stderr, Signals: l.signals,
		RendezvousTimeout: 20 * time.Second, ProgramStopGrace: 5 * time.Second, ReportTimeout: 5 * time.Second,
		ClientOptions: []rendezvous.ClientOption{rendezvous.WithLongPoll(time.Second), rendezvous.WithBackoff(10*time.Millisecond, 100*time.Millisecond)},
	}
	return l
}

type outcome struct {
	code int
	err  error
}

func (l *launch) start(t *testing.T) <-chan outcome {
	t.Helper()
	ch := make(chan outcome, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	go func() {
		code, err := Run(ctx, l.cfg)
		ch <- outcome{code, err}
	}()
	return ch
}

func (l *launch) run(t *testing.T) outcome {
	t.Helper()
	select {
	case o := <-l.start(t):
		return o
	case <-time.After(60 * time.Second):
		t.Fatalf("launcher did not finish; stderr: %s", l.stderr.String())
		return outcome{}
	}
}

func wait(t *testing.T, ch <-chan outcome, l *launch) outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(30 * time.Second):
		t.Fatalf("launcher did not finish; stderr: %s", l.stderr.String())
		return outcome{}
	}
}

func id(typ taskspec.TaskType, i int) taskspec.TaskID { return taskspec.TaskID{Type: typ, Index: i} }

func group(typ taskspec.TaskType, n int) taskspec.TaskGroup {
	return taskspec.TaskGroup{Type: typ, Instances: n}
}

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}
