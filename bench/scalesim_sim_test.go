//go:build bench

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// simCluster is the simulated NodeManagers of one benchmark process and what they saw: when
// each task's container started, registered and got its spec, and the AM process's CPU and
// peak RSS.
type simCluster struct {
	ctx           context.Context
	tracker       string // the RM's ResourceTracker address
	serverUser    string // the user the NodeManagers act as towards the RM
	httpPort      int
	nodeMemoryMiB int64
	nodeVCores    int32
	hadoopVersion string
	bin           string // the tfyarn binary the AM container runs
	workDir       string // the AM containers' working directories
	confDir       string // HADOOP_CONF_DIR, for localizing the AM's job file from HDFS
	hold          time.Duration
	schedulerVia  string // the callTimer's address, put in the AM's job file
	logf          func(format string, args ...any)
	nodes         []*simNode

	mu         sync.Mutex
	started    []time.Time // a task container's startContainers
	registered []time.Time
	specs      []time.Time
	exits      int
	unreported int // exit reports that did not reach the AM in 10 s
	failures   []string
	hbCount    int
	hbTotal    time.Duration
	hbMax      time.Duration
	am         simAM
}

// simAM is the AM process as the simulated NodeManager saw it.
type simAM struct {
	PID      int
	Dir      string
	Started  time.Time
	Ended    time.Time
	Exit     int
	CPU      time.Duration // user + system (rusage)
	PeakKiB  int64         // ru_maxrss
	Finished bool
}

func (s *simCluster) startNodes(n int, firstHost, port int) error {
	for i := 0; i < n; i++ {
		host := fmt.Sprintf("127.0.%d.%d", 2+(firstHost+i)/250, 10+(firstHost+i)%250)
		node := newSimNode(s, host, port)
		if err := node.start(s.ctx); err != nil {
			return err
		}
		s.nodes = append(s.nodes, node)
	}
	return nil
}

func (s *simCluster) heartbeatDone(d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		return
	}
	s.hbCount++
	s.hbTotal += d
	s.hbMax = max(s.hbMax, d)
}

func (s *simCluster) taskStarted() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = append(s.started, time.Now())
}

func (s *simCluster) failed(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failures) < 20 {
		s.failures = append(s.failures, fmt.Sprintf(format, args...))
	}
}

// isAMContainer tells the AM's launch context (the client's: `./tfyarn am --job job.json`)
// from a task's.
func isAMContainer(clc *hadoopyarn.ContainerLaunchContextProto) bool {
	for _, c := range clc.GetCommand() {
		if strings.Contains(c, contract.BinaryName+" am ") {
			return true
		}
	}
	return false
}

// runLauncher is a task's launcher without a program: it reads its key from the container's
// credentials as `tfyarn task` does, registers, long-polls the spec, holds as a program would
// (long-polling a stop order, fresh credentials and a preemption warning like the real
// launcher), reports exit 0, and its container completes.
func (s *simCluster) runLauncher(ctx context.Context, n *simNode, name string, port int, env map[string]string, tokens []byte) {
	exit, err := s.meetAndHold(ctx, n, name, port, env, tokens)
	if err != nil {
		if ctx.Err() == nil {
			s.failed("%s: %v", name, err)
		}
		n.ended(name, 1, err.Error())
		return
	}
	n.ended(name, int32(exit), "")
}

func (s *simCluster) meetAndHold(ctx context.Context, n *simNode, name string, port int, env map[string]string, tokens []byte) (int, error) {
	creds, err := security.ParseCredentials(tokens)
	if err != nil {
		return 0, err
	}
	key, err := rendezvous.SecretFrom(creds)
	if err != nil {
		return 0, err
	}
	task, err := taskspec.ParseTaskID(env[contract.EnvTask])
	if err != nil {
		return 0, err
	}
	client, err := rendezvous.NewClient(env[contract.EnvAMAddress], name, key)
	if err != nil {
		return 0, err
	}
	defer client.Close()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	reg := rendezvous.Registration{Task: task, Host: n.id.GetHost(), Port: port, ContainerID: name, PID: os.Getpid()}
	if err := client.Register(rctx, reg); err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.registered = append(s.registered, time.Now())
	s.mu.Unlock()
	if _, err := client.WaitTaskSpec(rctx, task); err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.specs = append(s.specs, time.Now())
	s.mu.Unlock()
	stopped := s.holdLikeAProgram(ctx, client, task, name)
	exit := 0
	if stopped {
		exit = 143
	}
	ectx, ecancel := context.WithTimeout(ctx, 10*time.Second)
	defer ecancel()
	// Best effort, as the real launcher's: the AM learns the exit from YARN anyway.
	err = client.ReportExit(ectx, rendezvous.ExitReport{Task: task, ContainerID: name, ExitCode: exit, Stopped: stopped})
	s.mu.Lock()
	if err == nil {
		s.exits++
	} else {
		s.unreported++
		if s.unreported == 1 {
			s.failures = append(s.failures, fmt.Sprintf("%s: %v", name, err))
		}
	}
	s.mu.Unlock()
	return exit, nil
}

// holdLikeAProgram waits s.hold while long-polling what a running task's launcher long-polls; true when
// the AM ordered a stop first.
func (s *simCluster) holdLikeAProgram(ctx context.Context, client *rendezvous.Client, task taskspec.TaskID, name string) bool {
	hctx, cancel := context.WithTimeout(ctx, s.hold)
	defer cancel()
	stop := make(chan struct{}, 1)
	go func() {
		if _, err := client.WaitStop(hctx, task, name); err == nil {
			stop <- struct{}{}
		}
	}()
	go func() {
		var after uint64
		for hctx.Err() == nil {
			u, _, err := client.WaitCredentials(hctx, task, after)
			if err != nil {
				if errors.Is(err, rendezvous.ErrNotServed) {
					client.Close() // as tfyarn task: no idle connection left to the AM
				}
				return
			}
			after = u.Version
		}
	}()
	go func() { _, _ = client.WaitNotice(hctx, task, name, 0) }()
	select {
	case <-stop:
		return true
	case <-hctx.Done():
		return false
	}
}

// startAM runs the real `tfyarn am` for the AM's container as a NodeManager would, skipping
// localization of the binary (the local one): its job file fetched from HDFS into a working
// directory of its own, its credentials in a token file, the container's environment.
func (s *simCluster) startAM(ctx context.Context, n *simNode, name string, env map[string]string, clc *hadoopyarn.ContainerLaunchContextProto) error {
	dir := filepath.Join(s.workDir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := s.localize(ctx, dir, env, clc.GetLocalResources()); err != nil {
		return err
	}
	tokenFile := filepath.Join(dir, "container_tokens")
	if err := os.WriteFile(tokenFile, clc.GetTokens(), 0o600); err != nil {
		return err
	}
	env[contract.EnvContainerID] = name
	env[contract.EnvNMHost] = n.id.GetHost()
	env["NM_PORT"] = fmt.Sprint(n.id.GetPort())
	env["NM_HTTP_PORT"] = fmt.Sprint(s.httpPort)
	env[contract.EnvTokenFile] = tokenFile
	env["LOG_DIRS"], env["PWD"], env["HOME"] = dir, dir, dir
	env["PATH"] = os.Getenv("PATH")
	var envList []string
	for k, v := range env {
		envList = append(envList, k+"="+v)
	}
	sort.Strings(envList)
	cmd := exec.Command(filepath.Join(dir, contract.BinaryName), "am", "--job", contract.JobFileName)
	cmd.Dir, cmd.Env = dir, envList
	out, err := os.Create(filepath.Join(dir, "am.stderr"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return err
	}
	s.mu.Lock()
	s.am = simAM{PID: cmd.Process.Pid, Dir: dir, Started: time.Now()}
	s.mu.Unlock()
	go func() {
		<-ctx.Done()
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}()
	go s.waitAM(cmd, out, n, name)
	return nil
}

func (s *simCluster) waitAM(cmd *exec.Cmd, out *os.File, n *simNode, name string) {
	err := cmd.Wait()
	out.Close()
	exit := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		exit = ee.ExitCode()
	}
	s.mu.Lock()
	s.am.Ended, s.am.Exit, s.am.Finished = time.Now(), exit, true
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.am.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		s.am.PeakKiB = ru.Maxrss
	}
	s.mu.Unlock()
	n.ended(name, int32(exit), "")
}

// localize puts the AM's local resources in dir: the binary is the local one (linked), the
// rest (the job file, a sealed keytab) is read from HDFS as the job's user.
func (s *simCluster) localize(ctx context.Context, dir string, env map[string]string, res []*hadoopyarn.StringLocalResourceMapProto) error {
	var fs *hdfs.FS
	for _, r := range res {
		dst := filepath.Join(dir, r.GetKey())
		if r.GetKey() == contract.BinaryName {
			if err := os.Symlink(s.bin, dst); err != nil {
				return err
			}
			continue
		}
		if fs == nil {
			conf, err := hadoopconf.LoadDir(s.confDir)
			if err != nil {
				return err
			}
			if fs, err = hdfs.Connect(ctx, conf, env["HADOOP_USER_NAME"]); err != nil {
				return err
			}
			defer fs.Close()
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = fs.ReadFileTo(ctx, r.GetValue().GetResource().GetFile(), f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("localizing %s: %w", r.GetKey(), err)
		}
		if r.GetKey() == contract.JobFileName && s.schedulerVia != "" {
			if err := pointScheduler(dst, s.schedulerVia); err != nil {
				return err
			}
		}
	}
	return nil
}

// pointScheduler rewrites the job file's scheduler address (the AM's ResourceManager for
// allocate) to addr: the callTimer in front of the real one.
func pointScheduler(jobFile, addr string) error {
	b, err := os.ReadFile(jobFile)
	if err != nil {
		return err
	}
	var jf map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&jf); err != nil {
		return err
	}
	conf, ok := jf["conf"].(map[string]any)
	if !ok || conf[schedulerAddressKey] == nil {
		return fmt.Errorf("the job file has no %s", schedulerAddressKey)
	}
	conf[schedulerAddressKey] = addr
	out, err := json.Marshal(jf)
	if err != nil {
		return err
	}
	return os.WriteFile(jobFile, out, 0o600)
}

const schedulerAddressKey = "yarn.resourcemanager.scheduler.address"
