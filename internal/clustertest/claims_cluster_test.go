package clustertest

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClaimsClusterUpOneLineErrors: README "a taken port, a missing JDK or
// a failed jar download stops it with a one-line error". It runs a copy of
// the cluster scripts (so the real testcluster/target stamp cannot skip the
// build) in a fresh TC_DIR; no JVM ever starts. A failed download cannot be
// produced here, so a stand-in `mvn` fails the way Maven does.
func TestClaimsClusterUpOneLineErrors(t *testing.T) {
	home := filepath.Join(t.TempDir(), "testcluster")
	require.NoError(t, os.MkdirAll(home, 0o755))
	for _, f := range []string{"cluster.sh", "jvm.sh", "linuxexecutor.sh", "docker.sh", "build.sh", "pom.xml"} {
		b, err := os.ReadFile(filepath.Join(RepoRoot(), "testcluster", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(home, f), b, 0o755))
	}

	// The tools the scripts use before starting java, without java or mvn.
	noJava := t.TempDir()
	for _, tool := range []string{"bash", "dirname", "realpath", "mkdir", "sed", "awk", "date", "pkill", "sleep", "rm", "cat", "seq", "grep", "cut", "find", "touch"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err, "the test needs %s", tool)
		require.NoError(t, os.Symlink(p, filepath.Join(noJava, tool)))
	}
	failingMaven := t.TempDir()
	java, err := exec.LookPath("java")
	require.NoError(t, err, "JDK 17 is part of the set-up")
	require.NoError(t, os.Symlink(java, filepath.Join(failingMaven, "java")))
	require.NoError(t, os.WriteFile(filepath.Join(failingMaven, "mvn"), []byte("#!/bin/sh\n"+
		"echo '[ERROR] Failed to execute goal on project testcluster: Could not resolve dependencies: Could not transfer artifact org.apache.hadoop:hadoop-minicluster:pom:3.4.2 from/to central'\n"+
		"exit 1\n"), 0o755))

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	takenPort := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)

	for _, c := range []struct {
		name  string
		path  string
		ports map[string]string
		want  string
	}{
		{"taken port", os.Getenv("PATH"), map[string]string{"RM_PORT": takenPort},
			"testcluster: port " + takenPort + " is already in use by another process; stop it (ss -ltnp | grep :" + takenPort + ") or choose other ports"},
		{"no JDK", noJava, nil, "testcluster: no 'java' on PATH; install JDK 17"},
		{"failed jar download", failingMaven + ":" + noJava, nil,
			"testcluster: Maven could not fetch Hadoop 3.4.2's jars from Maven Central or compile the launcher ([ERROR] Failed to execute goal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := []string{"PATH=" + c.path, "HOME=" + t.TempDir(), "TC_DIR=" + filepath.Join(t.TempDir(), "tc")}
			for _, k := range []string{"RM_PORT", "SCHEDULER_PORT", "TRACKER_PORT", "ADMIN_PORT", "RM_WEB_PORT", "NN_PORT", "NN_HTTP_PORT", "NM_PORT", "NM_LOCALIZER_PORT", "NM_WEB_PORT"} {
				p := c.ports[k]
				if p == "" {
					p = strconv.Itoa(freeLoopbackPort(t))
				}
				env = append(env, k+"="+p)
			}
			var stdout, stderr bytes.Buffer
			cmd := exec.Command("bash", filepath.Join(home, "cluster.sh"), "up")
			cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "stdout %q stderr %q", stdout.String(), stderr.String())
			require.Equal(t, 2, exit.ExitCode(), stderr.String())
			require.True(t, strings.HasPrefix(stderr.String(), c.want), "got %q\nwant %q", stderr.String(), c.want)
			require.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
		})
	}
}

// freeLoopbackPort is a port nothing listened on a moment ago; the cluster
// never binds it here (it stops before starting the JVM).
func freeLoopbackPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestClaimsClusterProfiles: README "a second, privacy cluster on ports shifted by 10000", "on
// ports shifted by 20000 (KDC 28090)", "ports shifted by 4000, one more NodeManager", "ports
// shifted by 8000", "3 NodeManagers", "each NodeManager a process on a host of its own",
// "containers as their users" (the defaults of cluster.sh), and "the ResourceManager declares it
// LOST after TC_NM_EXPIRY_MS, 30 s, 10 s on the suite's cluster", and docs/test-cluster.md's
// "TC_NODEMANAGERS=0 ..." (the scale simulation's cluster).
func TestClaimsClusterProfiles(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(RepoRoot(), "testcluster", "cluster.sh"))
	require.NoError(t, err)
	defaults := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z_]+)=\$\{[A-Z_]+:-(\d+)\}`).FindAllStringSubmatch(string(script), -1) {
		defaults[m[1]], _ = strconv.Atoi(m[2])
	}
	require.Equal(t, 30000, defaults["TC_NM_EXPIRY_MS"])
	require.Equal(t, 3, defaults["TC_NODEMANAGERS"])
	require.Equal(t, 1, defaults["TC_NM_HOSTS"], "one NodeManager per host by default")
	require.Regexp(t, `(?m)^TC_EXECUTOR=\$\{TC_EXECUTOR:-linux\}$`, string(script), "containers as their users by default")
	require.Equal(t, 8090, defaults["KDC_PORT"])

	for _, c := range []struct {
		p     profile
		shift int
	}{{privacyProfile, 10000}, {kerberosProfile, 20000}, {faultsProfile, 4000}, {dockerProfile, 8000}} {
		env := envOf(c.p)
		for _, k := range []string{"RM_PORT", "SCHEDULER_PORT", "TRACKER_PORT", "ADMIN_PORT", "RM_WEB_PORT", "NN_PORT", "NN_HTTP_PORT", "NM_PORT", "NM_LOCALIZER_PORT", "NM_WEB_PORT"} {
			require.Equal(t, strconv.Itoa(defaults[k]+c.shift), env[k], "%s %s", c.p.dir, k)
		}
		if c.p.name == "kerberos" {
			require.Equal(t, "28090", env["KDC_PORT"])
		}
		require.NotEqual(t, "0", env["TC_NM_HOSTS"], "%s: the production shape like every cluster", c.p.dir)
		require.NotEqual(t, "default", env["TC_EXECUTOR"], "%s: containers as their users like every cluster", c.p.dir)
	}
	require.Equal(t, "4", envOf(faultsProfile)["TC_NODEMANAGERS"], "one more NodeManager")
	require.Equal(t, "10000", envOf(faultsProfile)["TC_NM_EXPIRY_MS"])
	require.Equal(t, "8", envOf(scaleProfile)["TC_NODEMANAGERS"], "the scale profile keeps 8")
	// "TC_NODEMANAGERS=0 starts HDFS and the ResourceManager without any NodeManager of Hadoop's
	// ... (.testcluster-sim, ports shifted by 12000)": the launcher takes 0 and then starts none.
	sim := envOf(simProfile)
	require.Equal(t, "0", sim["TC_NODEMANAGERS"])
	require.Equal(t, ".testcluster-sim", simProfile.dir)
	for _, k := range []string{"RM_PORT", "SCHEDULER_PORT", "TRACKER_PORT", "ADMIN_PORT", "RM_WEB_PORT", "NN_PORT", "NN_HTTP_PORT", "NM_PORT", "NM_LOCALIZER_PORT", "NM_WEB_PORT"} {
		require.Equal(t, strconv.Itoa(defaults[k]+12000), sim[k], "%s %s", simProfile.dir, k)
	}
	java, err := os.ReadFile(filepath.Join(RepoRoot(), "testcluster", "src", "main", "java", "dev", "tfyarn", "testcluster", "TestCluster.java"))
	require.NoError(t, err)
	require.Contains(t, string(java), "return nodeManagers == 0;")
	require.Contains(t, string(java), "o.nodeManagers < 2 && !o.simulatedNodes()")
	// "One NodeManager per host": RPC 8041, localizer 8040, web 8042 on each NodeManager's own address.
	require.Equal(t, 8041, defaults["NM_PORT"])
	require.Equal(t, 8040, defaults["NM_LOCALIZER_PORT"])
	require.Equal(t, 8042, defaults["NM_WEB_PORT"])
	// "Profile kerberos ... in the production shape (... the defaults TC_NM_HOSTS=1,
	// TC_EXECUTOR=linux, TC_NODEMANAGERS=3 of this profile)", and the tests' kerberos cluster.
	for _, want := range []string{"TC_NM_HOSTS=${asked_nm_hosts:-1}", "TC_EXECUTOR=${asked_executor:-linux}", "TC_NODEMANAGERS=${asked_nodemanagers:-3}"} {
		require.Contains(t, string(script), want)
	}
	require.Equal(t, "1", envOf(kerberosProfile)["TC_NM_HOSTS"])
	require.Equal(t, "linux", envOf(kerberosProfile)["TC_EXECUTOR"])
	require.Equal(t, "3", envOf(kerberosProfile)["TC_NODEMANAGERS"])
}

func envOf(p profile) map[string]string {
	m := map[string]string{}
	for _, kv := range p.env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}
