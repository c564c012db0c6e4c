package clustertest

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every fixed port of every test cluster must lie below the kernel's ephemeral range: an
// outgoing connection of any other test may hold a port of that range at the moment a cluster
// binds it (CI lost a run to "BindException: localhost:38030" when the faults cluster used
// ports +30000). The ports must also differ between clusters, since several run at once.
func TestClusterPortsAvoidEphemeralRange(t *testing.T) {
	lowest := 32768 // Linux's default when the range cannot be read
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				lowest = n
			}
		}
	}

	script, err := os.ReadFile("../../testcluster/cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	defaults := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z_]+_PORT)=\$\{[A-Z_]+:-(\d+)\}`).FindAllStringSubmatch(string(script), -1) {
		defaults[m[1]] = m[2]
	}
	if len(defaults) < 8 {
		t.Fatalf("found %d port defaults in cluster.sh (%v); the pattern no longer matches the script", len(defaults), defaults)
	}

	owner := map[int]string{}
	profiles := []profile{mainProfile, privacyProfile, kerberosProfile, scaleProfile, simProfile, faultsProfile, dockerProfile}
	for _, v := range HadoopVersions {
		p, _ := hadoopProfile(v.Version)
		profiles = append(profiles, p)
	}
	for _, p := range profiles {
		ports := map[string]string{}
		for k, v := range defaults {
			ports[k] = v
		}
		for _, kv := range p.env {
			if k, v, ok := strings.Cut(kv, "="); ok && strings.HasSuffix(k, "_PORT") {
				ports[k] = v
			}
		}
		for name, v := range ports {
			if name == "KDC_PORT" && p.name != "kerberos" {
				continue // only the kerberos profile starts a KDC
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s: %s=%q is not a port", p.dir, name, v)
			}
			if n >= lowest {
				t.Errorf("%s: %s=%d is inside the ephemeral range (from %d): another connection may hold it when the cluster starts", p.dir, name, n, lowest)
			}
			if other, taken := owner[n]; taken {
				t.Errorf("%s: %s=%d is also used by %s", p.dir, name, n, other)
			}
			owner[n] = p.dir + " " + name
		}
	}
}

// The compatibility suite's clusters: clustertest's ports are the ones testcluster/jvm.sh gives
// HADOOP_VERSION=X (TC_HADOOP_VERSIONS), and its defaults are cluster.sh's.
func TestHadoopVersionPortsMatchScripts(t *testing.T) {
	jvm, err := os.ReadFile("../../testcluster/jvm.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^TC_HADOOP_VERSIONS=\(([^)]*)\)`).FindSubmatch(jvm)
	if m == nil {
		t.Fatal("no TC_HADOOP_VERSIONS=(...) line in testcluster/jvm.sh")
	}
	var want []string
	for _, v := range HadoopVersions {
		want = append(want, v.Version+":"+strconv.Itoa(v.Shift))
	}
	if got := strings.Fields(string(m[1])); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("testcluster/jvm.sh has TC_HADOOP_VERSIONS=(%s), clustertest.HadoopVersions %v", m[1], want)
	}
	script, err := os.ReadFile("../../testcluster/cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defaultPorts {
		line := d.name + "=${" + d.name + ":-" + strconv.Itoa(d.port) + "}"
		if !strings.Contains(string(script), "\n"+line+"\n") {
			t.Errorf("cluster.sh has no line %s", line)
		}
	}
	if !strings.Contains(string(jvm), "TC_DEFAULT_HADOOP="+DefaultHadoop+"\n") {
		t.Errorf("testcluster/jvm.sh's TC_DEFAULT_HADOOP is not %s", DefaultHadoop)
	}
}

// docs/hadoop-versions.md: "Another HADOOP_VERSION is refused in one line naming these."
func TestUnknownHadoopVersionRefused(t *testing.T) {
	cmd := exec.Command("bash", "../../testcluster/cluster.sh", "status")
	cmd.Env = append(os.Environ(), "HADOOP_VERSION=9.9.9", "TC_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("want exit code 2, got %v: %s", err, out)
	}
	var names []string
	for _, v := range HadoopVersions {
		names = append(names, v.Version)
	}
	want := "testcluster: HADOOP_VERSION=9.9.9 has no ports of its own; use " + DefaultHadoop + " (the default) or one of: " + strings.Join(names, " ") + "\n"
	if string(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
}
