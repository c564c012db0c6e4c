// Package clustertest gives end-to-end tests the real single-machine Hadoop cluster of
// testcluster/: it starts the cluster when it is not up (one start shared by every test binary,
// serialised with a lock file) and fails the test loudly when it cannot, never skipping.
package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cluster describes a running test cluster.
type Cluster struct {
	Root    string // the repository root
	Dir     string // the cluster's state directory (.testcluster, .testcluster-privacy, .testcluster-kerberos)
	ConfDir string // the client configuration (HADOOP_CONF_DIR)
	Profile string // plain, privacy or kerberos
	Facts   map[string]string
	// Kerberos describes the KDC and the test user of a kerberos-profile cluster; nil otherwise.
	Kerberos *KerberosInfo
}

// KerberosInfo is what a test needs to authenticate to a kerberos-profile cluster. Every file is
// written by the cluster's JVM (an in-process Apache Kerby KDC) and is readable by gokrb5.
type KerberosInfo struct {
	Realm            string        // EXAMPLE.COM
	Krb5Config       string        // path of krb5.conf (KRB5_CONFIG): TCP only, kdc = localhost:KDC port
	CCache           string        // path of a valid ticket cache (TGT) for Principal (MIT ccache v4)
	ExpiredCCache    string        // path of a ticket cache for Principal whose TGT has already expired
	Principal        string        // the test user, alice@EXAMPLE.COM (the YARN app user)
	Keytab           string        // Principal's keytab
	PasswordFile     string        // Principal's password (one line)
	ServicePrincipal string        // <osuser>/localhost@EXAMPLE.COM: NameNode, DataNode, RM and NMs
	KDC              string        // host:port of the KDC (TCP)
	TokenRenew       time.Duration // HDFS delegation token renew interval
	TokenMaxLifetime time.Duration // HDFS delegation token maximum lifetime
	// Bob is a second user of the same realm (bob@EXAMPLE.COM, HDFS home /user/bob): the other
	// user of the attack tests, with his own ticket, never alice's.
	Bob KerberosUser
	// Admin is ServicePrincipal with a ticket cache and keytab (no password): its short name
	// is the HDFS superuser, the administrator of the attack tests.
	Admin KerberosUser
	// Mapped is Alice.ML@EXAMPLE.COM, whom the cluster's hadoop.security.auth_to_local rules
	// (the servers' and the client configuration's) map to alice. Its Principal is empty on a
	// cluster started before the rules existed: RequireMappedUser says to restart it.
	Mapped KerberosUser
}

// RequireMappedUser returns the Kerberos cluster's user whose principal the cluster's
// auth_to_local rules map to another name (alice), or fails the test when the running cluster
// predates it.
func (k *KerberosInfo) RequireMappedUser(t testing.TB, c *Cluster) KerberosUser {
	t.Helper()
	if k.Mapped.Principal == "" || k.Mapped.CCache == "" || k.Mapped.Keytab == "" {
		t.Fatalf("the Kerberos cluster in %s was started before it had a user mapped by auth_to_local (no mapped.principal in its facts): restart it (TC_DIR=%s bash testcluster/cluster.sh down) and run the test again", c.Dir, c.Dir)
	}
	return k.Mapped
}

// KerberosUser is one user principal of the test realm with its own credentials, each file
// readable by the cluster's owner only.
type KerberosUser struct {
	Principal    string // bob@EXAMPLE.COM
	CCache       string // path of a valid ticket cache (TGT) for Principal
	Keytab       string // Principal's keytab
	PasswordFile string // Principal's password (one line); empty for Admin
}

// A profile names one running cluster: its directory and its ports.
type profile struct {
	name string
	dir  string   // relative to the repository root
	env  []string // port overrides for testcluster/cluster.sh
	// hadoop is the Hadoop release it runs (HADOOP_VERSION), "" for DefaultHadoop.
	hadoop string
}

// DefaultHadoop is the Hadoop release of every cluster but the compatibility suite's
// (testcluster/pom.xml, testcluster/jvm.sh).
const DefaultHadoop = "3.4.2"

// HadoopVersions are the other releases the compatibility suite runs on, each a plain cluster of
// its own (.testcluster-hadoop-X) whose every port is the default one shifted by its amount
// (testcluster/jvm.sh's TC_HADOOP_VERSIONS says the same), oldest last.
var HadoopVersions = []struct {
	Version string
	Shift   int
}{{"3.3.6", 2000}, {"3.5.0", 14000}, {"3.2.4", 16000}, {"3.1.4", 18000}}

// OldestHadoop is the oldest release whose test cluster starts on this machine's Java (JDK 17):
// docs/hadoop-versions.md says what stops older ones.
const OldestHadoop = "3.1.4"

// defaultPorts are cluster.sh's port defaults (TestClusterPortsAvoidEphemeralRange reads them
// there too).
var defaultPorts = []struct {
	name string
	port int
}{{"RM_PORT", 8032}, {"SCHEDULER_PORT", 8030}, {"TRACKER_PORT", 8031}, {"ADMIN_PORT", 8033},
	{"RM_WEB_PORT", 8088}, {"NN_PORT", 8020}, {"NN_HTTP_PORT", 9870}, {"NM_PORT", 8041},
	{"NM_LOCALIZER_PORT", 8040}, {"NM_WEB_PORT", 8042}}

// hadoopProfile is release version's cluster, or false when the suite has none for it.
func hadoopProfile(version string) (profile, bool) {
	for _, v := range HadoopVersions {
		if v.Version != version {
			continue
		}
		p := profile{name: "plain", dir: ".testcluster-hadoop-" + version, hadoop: version}
		for _, d := range defaultPorts {
			p.env = append(p.env, fmt.Sprintf("%s=%d", d.name, d.port+v.Shift))
		}
		return p, true
	}
	return profile{}, false
}

var (
	// The main cluster: whatever `make cluster-up` started (plain unless PROFILE said otherwise).
	mainProfile = profile{dir: ".testcluster"}
	// A second cluster with hadoop.rpc.protection=privacy on ports shifted by 10000, so that the
	// SASL-wrapped paths (auth-conf) are tested in the same run as the plain ones.
	privacyProfile = profile{name: "privacy", dir: ".testcluster-privacy", env: []string{
		"RM_PORT=18032", "SCHEDULER_PORT=18030", "TRACKER_PORT=18031", "ADMIN_PORT=18033",
		"RM_WEB_PORT=18088", "NN_PORT=18020", "NN_HTTP_PORT=19870",
		"NM_PORT=18041", "NM_LOCALIZER_PORT=18040", "NM_WEB_PORT=18042",
	}}
	// A third cluster with Kerberos (an in-JVM KDC on 28090) on ports shifted by 20000, in the
	// production shape: three NodeManagers, each a process on a host of its own with its own
	// service principal and keytab, running containers as their users (alice, bob) under
	// LinuxContainerExecutor. Root only, like the linux-executor cluster.
	kerberosProfile = profile{name: "kerberos", dir: ".testcluster-kerberos", env: []string{
		"RM_PORT=28032", "SCHEDULER_PORT=28030", "TRACKER_PORT=28031", "ADMIN_PORT=28033",
		"RM_WEB_PORT=28088", "NN_PORT=28020", "NN_HTTP_PORT=29870", "KDC_PORT=28090",
		"NM_PORT=28041", "NM_LOCALIZER_PORT=28040", "NM_WEB_PORT=28042",
		"TC_NM_HOSTS=1", "TC_NODEMANAGERS=3", "TC_EXECUTOR=linux",
		// Four JVMs and a KDC: ready in 111 s once at load 40 on 2 cores; 180 s is too close.
		"CLUSTER_TIMEOUT=300",
	}}
	// The scale benchmark's own plain cluster (bench/scale_bench_test.go): 8 NodeManagers of 32
	// vcores, ports shifted by 6000, so 200 one-vcore containers run at once beside the others.
	scaleProfile = profile{name: "plain", dir: ".testcluster-scale", env: []string{
		"RM_PORT=14032", "SCHEDULER_PORT=14030", "TRACKER_PORT=14031", "ADMIN_PORT=14033",
		"RM_WEB_PORT=14088", "NN_PORT=14020", "NN_HTTP_PORT=15870", "TC_NODEMANAGERS=8", "TC_NM_VCORES=32",
		"NM_PORT=14041", "NM_LOCALIZER_PORT=14040", "NM_WEB_PORT=14042",
	}}
	// The scale simulation's cluster (bench/scalesim_bench_test.go): HDFS and the ResourceManager
	// with no NodeManager of Hadoop's (TC_NODEMANAGERS=0): the benchmark's simulated ones register
	// over the tracker port and stand in for them. Ports shifted by 12000; NM_PORT is the port every
	// simulated NodeManager listens on, each on a loopback address of its own.
	simProfile = profile{name: "plain", dir: ".testcluster-sim", env: []string{
		"RM_PORT=20032", "SCHEDULER_PORT=20030", "TRACKER_PORT=20031", "ADMIN_PORT=20033",
		"RM_WEB_PORT=20088", "NN_PORT=20020", "NN_HTTP_PORT=21870", "TC_NODEMANAGERS=0", "TC_NM_HOSTS=1",
		"TC_EXECUTOR=default", "NM_PORT=20041", "NM_LOCALIZER_PORT=20040", "NM_WEB_PORT=20042",
	}}
	// A fourth, plain cluster of its own for the fault-injection suite (ports +4000): stopping
	// a NodeManager there kills no other test's containers. Its NodeManagers count 32 vcores
	// each (accounting only) so that the suite's jobs run side by side, and a fourth
	// (unlabelled, like the first and third) takes over when one is lost; a silent one is LOST
	// after 10 s. With three unlabelled NodeManagers, a job's tasks spread over three hosts there
	// too (TestE2ENode*). Every cluster's NodeManager I listens on 127.0.1.(10+I) (see
	// testcluster/cluster.sh): its NodeManager ports differ between clusters like the others.
	faultsProfile = profile{name: "plain", dir: ".testcluster-faults", env: []string{
		"RM_PORT=12032", "SCHEDULER_PORT=12030", "TRACKER_PORT=12031", "ADMIN_PORT=12033",
		"RM_WEB_PORT=12088", "NN_PORT=12020", "NN_HTTP_PORT=13870", "TC_NM_VCORES=32", "TC_NODEMANAGERS=4",
		"NM_PORT=12041", "NM_LOCALIZER_PORT=12040", "NM_WEB_PORT=12042",
		"TC_NM_EXPIRY_MS=10000",
	}}
	// The production shape with YARN's Docker runtime: NodeManagers each a process on a host of
	// their own (TC_NM_HOSTS=1; three unlabelled, so that an image job's tasks spread over three
	// hosts, and the gpu-labelled one) running containers as their users (TC_EXECUTOR=linux), a
	// Docker daemon of the cluster's own (Debian's docker.io, no bridge, no iptables; its socket
	// below the cluster directory) holding the test image built from Debian packages
	// (testcluster/docker.sh), on ports shifted by 8000.
	dockerProfile = profile{name: "plain", dir: ".testcluster-docker", env: []string{
		"RM_PORT=16032", "SCHEDULER_PORT=16030", "TRACKER_PORT=16031", "ADMIN_PORT=16033",
		"RM_WEB_PORT=16088", "NN_PORT=16020", "NN_HTTP_PORT=17870", "TC_EXECUTOR=linux", "TC_DOCKER=1",
		"NM_PORT=16041", "NM_LOCALIZER_PORT=16040", "NM_WEB_PORT=16042",
		"TC_NM_HOSTS=1", "TC_NODEMANAGERS=4", "TC_NM_VCORES=16",
	}}

	mu       sync.Mutex
	started  = map[string]*Cluster{}
	failures = map[string]error{}
)

// Require returns the main test cluster, starting it first if needed. The profile is the one
// already running, or TFYARN_TESTCLUSTER_PROFILE (default plain) for a fresh start.
func Require(t testing.TB) *Cluster {
	t.Helper()
	return requireProfile(t, mainProfile)
}

// RequirePrivacy returns a second cluster whose RPC protection is privacy (SASL auth-conf on
// every token-authenticated connection), starting it if needed. `make test` stops it at the end.
func RequirePrivacy(t testing.TB) *Cluster {
	t.Helper()
	return requireProfile(t, privacyProfile)
}

// RequireKerberos returns a third cluster secured with Kerberos (see KerberosInfo: a KDC in the
// cluster's JVM, user alice with a ticket cache, keytab and password, short-lived HDFS delegation
// tokens), starting it if needed. `make test` stops it at the end.
func RequireKerberos(t testing.TB) *Cluster {
	t.Helper()
	return requireProfile(t, kerberosProfile)
}

// RequireSim returns the scale simulation's cluster (see simProfile): HDFS and a ResourceManager
// waiting for simulated NodeManagers, starting it if needed. The benchmark stops it.
func RequireSim(t testing.TB) *Cluster {
	t.Helper()
	return requireProfile(t, simProfile)
}

// RequireScale returns the scale benchmark's cluster (see scaleProfile),
// starting it if needed; the benchmark stops it (Control "down").
func RequireScale(t testing.TB) *Cluster {
	t.Helper()
	return requireProfile(t, scaleProfile)
}

// RequireFaults returns the fault-injection suite's own plain cluster (see
// faultsProfile), starting it if needed. `make test` stops it at the end.
func RequireFaults(t testing.TB) *Cluster {
	t.Helper()
	return requireProfile(t, faultsProfile)
}

// RequireHadoop returns the plain cluster of Hadoop release version (one of HadoopVersions, in
// .testcluster-hadoop-VERSION on ports of its own), starting it if needed. `make test` and `make
// test-compat` stop it at the end.
func RequireHadoop(t testing.TB, version string) *Cluster {
	t.Helper()
	p, ok := hadoopProfile(version)
	if !ok {
		t.Fatalf("clustertest: no test cluster for Hadoop %s; the suite's releases are in clustertest.HadoopVersions", version)
	}
	return requireProfile(t, p)
}

// RequireHadoopKerberos is RequireHadoop's cluster in profile kerberos: the same directory and
// ports (its KDC on 8090 shifted by the release's amount), so the release's plain cluster must be
// stopped first.
func RequireHadoopKerberos(t testing.TB, version string) *Cluster {
	t.Helper()
	p, ok := hadoopProfile(version)
	if !ok {
		t.Fatalf("clustertest: no test cluster for Hadoop %s; the suite's releases are in clustertest.HadoopVersions", version)
	}
	p.name = "kerberos"
	// Four JVMs and a KDC, as kerberosProfile.
	p.env = append(p.env, "CLUSTER_TIMEOUT=300")
	return requireProfile(t, p)
}

// RequireDocker returns the linux-executor cluster with its own Docker daemon and the test image
// (see dockerProfile), starting it if needed. `make test` stops it at the end.
func RequireDocker(t testing.TB) *Cluster {
	t.Helper()
	c := requireProfile(t, dockerProfile)
	if c.DockerImage() == "" {
		t.Fatalf("clustertest: the cluster in %s has no test image (%s missing): was it started with TC_DOCKER=1?", c.Dir, filepath.Join(c.Dir, "docker", "test-image"))
	}
	return c
}

// DockerImage is the name of the test image in the cluster's Docker daemon (marker file
// /etc/tfyarn-test-image, bash, python3), or "" when the cluster has no daemon.
func (c *Cluster) DockerImage() string {
	b, err := os.ReadFile(filepath.Join(c.Dir, "docker", "test-image"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// DockerHost is the DOCKER_HOST of the cluster's own Docker daemon.
func (c *Cluster) DockerHost() string {
	return "unix://" + filepath.Join(c.Dir, "docker", "docker.sock")
}

// Control runs `cluster.sh ARGS...` against this cluster (e.g. "nm", "stop", "0", or "preempt",
// CONTAINER_ID): the faults its JVM injects on demand. It returns the script's one-line answer.
func (c *Cluster) Control(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(c.Root, "testcluster", "cluster.sh"), args...)
	cmd.Dir = c.Root
	cmd.Env = append(os.Environ(), "TC_DIR="+c.Dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clustertest: cluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// EachCluster runs f as parallel subtests "plain" (Require) and "privacy"
// (RequirePrivacy): the same test against both clusters.
func EachCluster(t *testing.T, f func(t *testing.T, c *Cluster)) {
	t.Helper()
	for _, tc := range []struct {
		name    string
		cluster func(testing.TB) *Cluster
	}{
		{"plain", Require},
		{"privacy", RequirePrivacy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f(t, tc.cluster(t))
		})
	}
}

func requireProfile(t testing.TB, p profile) *Cluster {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	// A release's directory holds its plain cluster, then its kerberos one.
	key := p.dir + " " + p.name
	c, ok := started[key]
	if !ok && failures[key] == nil {
		c, failures[key] = ensureUp(p)
		started[key] = c
	}
	if err := failures[key]; err != nil {
		t.Fatalf("clustertest: the test cluster (%s) is needed and could not be started: %v", p.dir, err)
	}
	return c
}

// RepoRoot finds the repository root from this source file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func ensureUp(p profile) (*Cluster, error) {
	root := RepoRoot()
	dir := filepath.Join(root, p.dir)
	hadoop := p.hadoop
	if hadoop == "" {
		hadoop = DefaultHadoop
	}
	// Every profile names its release: a caller's HADOOP_VERSION (a sourced env.sh) is not it.
	env := append([]string{"TC_DIR=" + dir, "HADOOP_VERSION=" + hadoop}, p.env...)
	script := filepath.Join(root, "testcluster", "cluster.sh")
	if err := run(root, env, 5*time.Second, script, "status"); err != nil {
		name := p.name
		if name == "" {
			name = os.Getenv("TFYARN_TESTCLUSTER_PROFILE")
		}
		if name == "" {
			name = "plain"
		}
		// flock serialises concurrent test binaries; the second one finds the cluster healthy.
		if err := run(root, env, 6*time.Minute, "flock", "-o", dir+".lock", script, "up", name); err != nil {
			return nil, err
		}
	}
	facts, err := readFacts(filepath.Join(dir, "ready"))
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		Root:    root,
		Dir:     dir,
		ConfDir: filepath.Join(dir, "conf"),
		Profile: facts["profile"],
		Facts:   facts,
	}
	if c.Profile == "kerberos" {
		if c.Kerberos, err = kerberosInfo(facts); err != nil {
			return nil, err
		}
	}
	actAsTestUser(c)
	return c, nil
}

func kerberosInfo(facts map[string]string) (*KerberosInfo, error) {
	k := &KerberosInfo{
		Realm:            facts["realm"],
		Krb5Config:       facts["krb5.conf"],
		CCache:           facts["ccache"],
		ExpiredCCache:    facts["expired.ccache"],
		Principal:        facts["principal"],
		Keytab:           facts["keytab"],
		PasswordFile:     facts["password.file"],
		ServicePrincipal: facts["service.principal"],
		KDC:              facts["kdc"],
		Bob: KerberosUser{
			Principal:    facts["bob.principal"],
			CCache:       facts["bob.ccache"],
			Keytab:       facts["bob.keytab"],
			PasswordFile: facts["bob.password.file"],
		},
		Admin: KerberosUser{
			Principal: facts["service.principal"],
			CCache:    facts["service.ccache"],
			Keytab:    facts["service.keytab"],
		},
		Mapped: KerberosUser{
			Principal:    facts["mapped.principal"],
			CCache:       facts["mapped.ccache"],
			Keytab:       facts["mapped.keytab"],
			PasswordFile: facts["mapped.password.file"],
		},
	}
	for key, d := range map[string]*time.Duration{"token.renew.ms": &k.TokenRenew, "token.max-lifetime.ms": &k.TokenMaxLifetime} {
		ms, err := strconv.ParseInt(facts[key], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("cluster facts: %s=%q: %w", key, facts[key], err)
		}
		*d = time.Duration(ms) * time.Millisecond
	}
	for key, v := range map[string]string{"realm": k.Realm, "krb5.conf": k.Krb5Config, "ccache": k.CCache,
		"expired.ccache": k.ExpiredCCache, "principal": k.Principal, "keytab": k.Keytab,
		"password.file": k.PasswordFile, "service.principal": k.ServicePrincipal, "kdc": k.KDC,
		"bob.principal": k.Bob.Principal, "bob.ccache": k.Bob.CCache, "bob.keytab": k.Bob.Keytab,
		"bob.password.file": k.Bob.PasswordFile, "service.ccache": k.Admin.CCache, "service.keytab": k.Admin.Keytab} {
		if v == "" {
			return nil, fmt.Errorf("cluster facts: %s missing for the kerberos profile", key)
		}
	}
	return k, nil
}

func readFacts(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading cluster facts: %w", err)
	}
	facts := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			facts[k] = v
		}
	}
	return facts, nil
}

func run(dir string, env []string, timeout time.Duration, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
	}
	return nil
}

// Env returns os.Environ with HADOOP_CONF_DIR pointing at the cluster, for child processes; for a
// kerberos cluster also KRB5_CONFIG and KRB5CCNAME (the test user's valid ticket cache).
func (c *Cluster) Env(extra ...string) []string {
	env := append(os.Environ(), "HADOOP_CONF_DIR="+c.ConfDir)
	if v := c.Facts["hadoop.version"]; v != "" {
		// testcluster/hadoop.sh runs the cluster's own release's CLIs.
		env = append(env, "HADOOP_VERSION="+v)
	}
	if c.Kerberos != nil {
		env = append(env, "KRB5_CONFIG="+c.Kerberos.Krb5Config, "KRB5CCNAME=FILE:"+c.Kerberos.CCache)
	}
	return append(env, extra...)
}

// Hadoop runs one of Hadoop's own Java CLIs against the cluster (see testcluster/hadoop.sh) as
// its administrator (Superuser; under Kerberos, whoever the ticket cache names), e.g.
// c.Hadoop(t, "yarn", "node", "-list"), and returns its standard output.
func (c *Cluster) Hadoop(t testing.TB, args ...string) string {
	t.Helper()
	t.Logf("step: hadoop.sh %s", strings.Join(args, " "))
	stdout, stderr, err := c.TryHadoop(args...)
	if err != nil {
		t.Fatalf("hadoop.sh %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout
}

// TryHadoop is Hadoop for commands that may fail for a while (e.g. `yarn
// logs` before aggregation has finished): the caller decides.
func (c *Cluster) TryHadoop(args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.Root, "testcluster", "hadoop.sh"), args...)
	cmd.Env = c.Env()
	if c.Kerberos == nil {
		cmd.Env = append(cmd.Env, "HADOOP_USER_NAME="+c.Superuser())
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}
