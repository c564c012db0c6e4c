//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/clusterinfo"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// javaNode is one node as `yarn node -list -showDetails` reports it.
type javaNode struct {
	state, labels     string
	mem, vcores, gpus int64
}

var (
	javaNodeLine = regexp.MustCompile(`^\s*(\S+:\d+)\s+(\S+)\s+\S+\s+\d+\s*$`)
	javaConfRes  = regexp.MustCompile(`Configured Resources : <memory:(\d+), vCores:(\d+)(?:, yarn.io/gpu: (\d+))?>`)
	javaLabels   = regexp.MustCompile(`^\s*Node-Labels : ?(.*)$`)
)

func parseJavaNodes(t *testing.T, out string) map[string]*javaNode {
	nodes := map[string]*javaNode{}
	var cur *javaNode
	for _, line := range strings.Split(out, "\n") {
		if m := javaNodeLine.FindStringSubmatch(line); m != nil {
			cur = &javaNode{state: m[2]}
			nodes[m[1]] = cur
		} else if m := javaConfRes.FindStringSubmatch(line); m != nil && cur != nil {
			cur.mem, _ = strconv.ParseInt(m[1], 10, 64)
			cur.vcores, _ = strconv.ParseInt(m[2], 10, 64)
			cur.gpus, _ = strconv.ParseInt(m[3], 10, 64)
		} else if m := javaLabels.FindStringSubmatch(line); m != nil && cur != nil {
			cur.labels = strings.TrimSpace(m[1])
		}
	}
	require.NotEmpty(t, nodes, "no nodes parsed from:\n%s", out)
	return nodes
}

func javaField(out, key string) string {
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(key) + ` : ?(.*)$`).FindStringSubmatch(out)
	if m == nil {
		return "<missing>"
	}
	return strings.TrimSpace(m[1])
}

func TestE2EClusterMatchesJava(t *testing.T) {
	c := clustertest.Require(t)
	stdout, stderr, code := runCLI(t, "--conf-dir", c.ConfDir, "cluster", "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	var v clusterView
	require.NoError(t, json.Unmarshal([]byte(stdout), &v))

	java := parseJavaNodes(t, c.Hadoop(t, "yarn", "node", "-list", "-showDetails"))
	require.Len(t, v.Nodes, c.NodeManagers(t))
	require.Len(t, java, c.NodeManagers(t))
	var gpuNodes []string
	for _, n := range v.Nodes {
		j := java[n.ID]
		require.NotNil(t, j, "node %s unknown to Java's CLI", n.ID)
		require.Equal(t, "RUNNING", n.State)
		require.Equal(t, j.state, n.State)
		require.EqualValues(t, 8192, n.MemoryMB.Total)
		require.EqualValues(t, 8, n.VCores.Total)
		require.EqualValues(t, 2, n.GPUs.Total)
		require.Equal(t, j.mem, n.MemoryMB.Total)
		require.Equal(t, j.vcores, n.VCores.Total)
		require.Equal(t, j.gpus, n.GPUs.Total)
		require.Equal(t, j.labels, strings.Join(n.Labels, ","), n.ID)
		if len(n.Labels) == 1 && n.Labels[0] == "gpu" {
			gpuNodes = append(gpuNodes, n.ID)
		}
	}
	require.Len(t, gpuNodes, 1, "label gpu on exactly one node")
	require.EqualValues(t, c.NodeManagers(t), v.NodeManagers.Active)

	require.Equal(t, []clusterinfo.NodeLabel{{Name: "gpu", Exclusive: true}}, v.NodeLabels)
	var typeNames []string
	for _, rt := range v.ResourceTypes {
		typeNames = append(typeNames, rt.Name)
	}
	require.Equal(t, []string{"memory-mb", "vcores", "yarn.io/gpu"}, typeNames)

	queues := map[string]clusterinfo.Queue{}
	for _, q := range v.Queues {
		queues[q.Name] = q
	}
	require.Contains(t, queues, "default")
	require.Contains(t, queues, "ml-gpu")
	for _, name := range []string{"default", "ml-gpu"} {
		jq := c.Hadoop(t, "yarn", "queue", "-status", name)
		q := queues[name]
		require.Equal(t, javaField(jq, "Queue Path"), q.Path)
		require.Equal(t, javaField(jq, "State"), q.State)
		require.Equal(t, javaField(jq, "Capacity"), strconv.FormatFloat(q.CapacityPercent, 'f', 2, 64)+"%")
		require.Equal(t, javaField(jq, "Maximum Capacity"), strconv.FormatFloat(q.MaxCapacityPercent, 'f', 2, 64)+"%")
		require.Equal(t, javaField(jq, "Accessible Node Labels"), strings.Join(q.AccessibleLabels, ","))
		require.Equal(t, javaField(jq, "Default Node Label expression"), orNotSet(q.DefaultLabelExpression))
	}
	require.Equal(t, []string{"gpu"}, queues["ml-gpu"].AccessibleLabels)
	require.Equal(t, "gpu", queues["ml-gpu"].DefaultLabelExpression)
	require.EqualValues(t, 60, queues["default"].CapacityPercent)
	require.EqualValues(t, 40, queues["ml-gpu"].CapacityPercent)

	// The derived max allocation must equal what the RM itself says when
	// asked the expensive way (getNewApplication creates an unused id).
	rm := clientFor(t, c.ConfDir)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	na, err := rm.GetNewApplication(ctx)
	require.NoError(t, err)
	require.Equal(t, yarn.MemoryMiB(na.GetMaximumCapability()), v.MaxAllocation.MemoryMB)
	require.Equal(t, yarn.VCores(na.GetMaximumCapability()), v.MaxAllocation.VCores)
	require.Equal(t, yarn.GPUs(na.GetMaximumCapability()), v.MaxAllocation.Resources[yarn.ResourceGPU])
}

// orNotSet mirrors QueueCLI, which prints the default partition's name for
// a queue without a default label expression.
func orNotSet(s string) string {
	if s == "" {
		return "<DEFAULT_PARTITION>"
	}
	return s
}

func clientFor(t *testing.T, confDir string) *yarn.ApplicationClient {
	conf, err := hadoopconf.LoadDir(confDir)
	require.NoError(t, err)
	rm, err := yarn.NewApplicationClient(conf, yarn.ClientOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { rm.Close() })
	return rm
}

// submitRegisteredAM submits an application through yarn.ApplicationClient
// and makes it RUNNING. An application is RUNNING only once its AM has
// registered with the RM, so an AM container that just runs `sleep 120`
// stays ACCEPTED until the AM liveness monitor expires it (10 min). Instead
// the application is an unmanaged AM (no container), and the test registers
// it over ApplicationMasterProtocol with the AMRMToken from the report.
func submitRegisteredAM(t *testing.T, ctx context.Context, conf *hadoopconf.Config, rm *yarn.ApplicationClient, name string) *hadoopyarn.ApplicationIdProto {
	na, err := rm.GetNewApplication(ctx)
	require.NoError(t, err)
	id := na.GetApplicationId()
	t.Cleanup(func() { // never leave an application behind, whatever failed
		kctx, kcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer kcancel()
		_, _ = rm.KillApplication(kctx, id, "e2e cleanup")
	})
	require.NoError(t, rm.SubmitApplication(ctx, &hadoopyarn.ApplicationSubmissionContextProto{
		ApplicationId:   id,
		ApplicationName: proto.String(name),
		Queue:           proto.String("default"),
		ApplicationType: proto.String("TFYARN-TEST"),
		MaxAppAttempts:  proto.Int32(1),
		UnmanagedAm:     proto.Bool(true),
		Resource:        yarn.NewResource(128, 1, nil),
		AmContainerSpec: &hadoopyarn.ContainerLaunchContextProto{Command: []string{"sleep 120"}},
	}))
	r, err := rm.WaitApplication(ctx, id, 0, func(r *hadoopyarn.ApplicationReportProto) bool {
		return r.GetAmRmToken() != nil || yarn.IsTerminal(r.GetYarnApplicationState())
	})
	require.NoError(t, err)
	tp := r.GetAmRmToken()
	require.NotNil(t, tp, "no AMRMToken; state %s: %s", r.GetYarnApplicationState(), r.GetDiagnostics())

	addrs, err := conf.RMAddresses(hadoopconf.RMScheduler)
	require.NoError(t, err)
	prot, err := conf.RPCProtection()
	require.NoError(t, err)
	am, err := ipc.NewClient(ipc.Config{
		Addresses: addrs, Protocol: "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB", RequireSASL: true,
		SASL: []ipc.SaslMechanism{&ipc.DigestMD5{
			Tokens:     []security.Token{{Identifier: tp.GetIdentifier(), Password: tp.GetPassword(), Kind: tp.GetKind(), Service: tp.GetService()}},
			Kind:       security.KindAMRMToken,
			Protection: prot,
		}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { am.Close() })
	require.NoError(t, am.Call(ctx, "registerApplicationMaster", &hadoopyarn.RegisterApplicationMasterRequestProto{
		Host: proto.String("localhost"), RpcPort: proto.Int32(0), TrackingUrl: proto.String(""),
	}, &hadoopyarn.RegisterApplicationMasterResponseProto{}))
	return id
}

func TestE2ESubmitStatusListKill(t *testing.T) {
	c := clustertest.Require(t)
	rm := clientFor(t, c.ConfDir)
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	id := submitRegisteredAM(t, ctx, conf, rm, "tfyarn-e2e-cli")
	idText := yarn.FormatApplicationID(id)

	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	r, err := rm.WaitApplication(wctx, id, 0, func(r *hadoopyarn.ApplicationReportProto) bool {
		s := r.GetYarnApplicationState()
		return s == hadoopyarn.YarnApplicationStateProto_RUNNING || yarn.IsTerminal(s)
	})
	wcancel()
	require.NoError(t, err)
	require.Equal(t, "RUNNING", yarn.AppStateName(r.GetYarnApplicationState()), r.GetDiagnostics())

	st := statusJSON(t, c, idText)
	require.Equal(t, idText, st.ID)
	require.Equal(t, "RUNNING", st.State)
	require.Equal(t, "TFYARN-TEST", st.Type)
	require.Contains(t, []string{"default", "root.default"}, st.Queue, "the RM reports the queue path")
	require.Equal(t, rm.User(), st.User)
	require.NotNil(t, st.StartTime)

	stdout, stderr, code := runCLI(t, "--conf-dir", c.ConfDir, "status", idText)
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `(?m)^State\s+: RUNNING$`, stdout)

	stdout, stderr, code = runCLI(t, "--conf-dir", c.ConfDir, "list")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, idText)
	stdout, stderr, code = runCLI(t, "--conf-dir", c.ConfDir, "list", "--output", "json", "--queue", "default", "--state", "RUNNING")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, `"id": "`+idText+`"`)
	stdout, _, code = runCLI(t, "--conf-dir", c.ConfDir, "list", "--state", "KILLED")
	require.Equal(t, exitOK, code)
	require.NotContains(t, stdout, idText)

	java := javaAppStatus(t, c, idText)
	require.Equal(t, "RUNNING", javaField(java, "State"), java)

	start := time.Now()
	stdout, stderr, code = runCLI(t, "--conf-dir", c.ConfDir, "kill", idText)
	took := time.Since(start)
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, idText+" KILLED\n", stdout)
	require.Less(t, took, 10*time.Second)
	t.Logf("tfyarn kill %s: KILLED after %s", idText, took.Round(time.Millisecond))

	java = javaAppStatus(t, c, idText)
	require.Equal(t, "KILLED", javaField(java, "State"), java)
	require.Equal(t, "KILLED", javaField(java, "Final-State"), java)

	// Killing again is harmless and says so (issue 10): exit 0.
	stdout, _, code = runCLI(t, "--conf-dir", c.ConfDir, "kill", idText)
	require.Equal(t, exitOK, code)
	require.Equal(t, idText+" already ended KILLED/KILLED; nothing to kill\n", stdout)
}

// freePort returns a port nothing listens on (it was free a moment ago).
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

func writeConf(t *testing.T, from string, props map[string]string) string {
	dir := t.TempDir()
	for _, f := range []string{"core-site.xml", "hdfs-site.xml"} {
		if b, err := os.ReadFile(filepath.Join(from, f)); err == nil {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
		}
	}
	var b strings.Builder
	b.WriteString("<configuration>\n")
	for k, v := range props {
		b.WriteString("<property><name>" + k + "</name><value>" + v + "</value></property>\n")
	}
	b.WriteString("</configuration>\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte(b.String()), 0o644))
	return dir
}

func TestE2EUnreachableRM(t *testing.T) {
	c := clustertest.Require(t)
	dead := "127.0.0.1:" + strconv.Itoa(freePort(t))
	conf := writeConf(t, c.ConfDir, map[string]string{"yarn.resourcemanager.address": dead})

	for _, args := range [][]string{{"cluster"}, {"status", "application_1_0001"}, {"list"}} {
		start := time.Now()
		stdout, stderr, code := runCLI(t, append([]string{"--conf-dir", conf}, args...)...)
		took := time.Since(start)
		require.Equal(t, exitUsage, code)
		require.Empty(t, stdout)
		require.Equal(t, "tfyarn: cannot reach the ResourceManager at "+dead+" (from --conf-dir="+conf+
			"): connection refused; is the cluster up and HADOOP_CONF_DIR right?\n", stderr)
		require.Less(t, took, 15*time.Second)
	}

	// The same through the environment, as users run it.
	t.Setenv("HADOOP_CONF_DIR", conf)
	_, stderr, code := runCLI(t, "list")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "(from HADOOP_CONF_DIR="+conf+")")
}

func TestE2EUnknownAndMalformedIDs(t *testing.T) {
	c := clustertest.Require(t)
	for _, cmd := range []string{"status", "kill"} {
		_, stderr, code := runCLI(t, "--conf-dir", c.ConfDir, cmd, "application_1_0001")
		require.Equal(t, exitUsage, code)
		require.Equal(t, "tfyarn: application application_1_0001 not found (the ResourceManager at "+c.Facts["rm"]+" does not know it)\n", stderr)

		_, stderr, code = runCLI(t, "--conf-dir", c.ConfDir, cmd, "application_1")
		require.Equal(t, exitUsage, code)
		require.Contains(t, stderr, "expected application_<clusterTimestamp>_<sequence>")
	}
}

// javaAppStatus asks Hadoop's own ApplicationCLI (`yarn application -status ID`).
func javaAppStatus(t *testing.T, c *clustertest.Cluster, id string) string {
	return c.Hadoop(t, "yarn", "application", "-status", id)
}
