package contract

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/taskspec"
)

func hadoopconfWith(kv map[string]string) *hadoopconf.Config {
	c := hadoopconf.New(func(string) (string, bool) { return "", false })
	for k, v := range kv {
		c.Set(k, v)
	}
	return c
}

func TestJobFileRoundTripShipsOnlyWhitelistedKeys(t *testing.T) {
	conf := hadoopconfWith(map[string]string{
		"yarn.resourcemanager.scheduler.address": "rm:8030",
		"yarn.resourcemanager.zk-auth":           "digest:u:secret",
		"hadoop.rpc.protection":                  "privacy",
		"fs.defaultFS":                           "hdfs://nn:8020",
		"fs.s3a.secret.key":                      "secret",
	})
	g, _ := taskspec.ParseSpec(taskspec.Worker, "2x1c")
	jf := NewJobFile("application_1_0001", "alice", "/user/alice/.tfyarn/application_1_0001", taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "true"}, conf)
	jf.TaskResources = map[string]Resource{BinaryName: {Scheme: "hdfs", Host: "nn", Port: 8020, Path: "/c/tfyarn", Size: 1, Timestamp: 2}}
	jf.Success = taskspec.SuccessChief
	jf.RendezvousTimeout = time.Minute
	data, err := jf.Marshal()
	require.NoError(t, err)
	require.NotContains(t, string(data), "secret")
	back, err := ParseJobFile(data)
	require.NoError(t, err)
	require.Equal(t, jf, back)
	addrs, err := back.Config().RMAddresses(hadoopconf.RMScheduler)
	require.NoError(t, err)
	require.Equal(t, []string{"rm:8030"}, addrs)
	_, err = ParseJobFile([]byte(`{"version": 99}`))
	require.ErrorContains(t, err, "version 99")
	jf.Success = "most"
	data, err = jf.Marshal()
	require.NoError(t, err)
	_, err = ParseJobFile(data)
	require.ErrorContains(t, err, `unknown success rule "most"`)
}

// The scheduler's wait before killing a preempted container travels to
// the AM, which dates its preemption warnings with it.
func TestShipConfCarriesThePreemptionWait(t *testing.T) {
	got := ShipConf(hadoopconfWith(map[string]string{
		"yarn.resourcemanager.scheduler.class":                                  "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler",
		"yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill": "5000",
		"yarn.scheduler.fair.waitTimeBeforeKill":                                "7000",
		"yarn.resourcemanager.monitor.capacity.preemption.monitoring_interval":  "3000",
	}))
	require.Equal(t, map[string]string{
		"yarn.resourcemanager.scheduler.class":                                  "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler",
		"yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill": "5000",
		"yarn.scheduler.fair.waitTimeBeforeKill":                                "7000",
	}, got)
}

// The job's program and the per-type commands reach the AM byte for byte,
// whatever the bytes (the AM hands them to the launchers as they are).
func TestJobFileKeepsProgramBytes(t *testing.T) {
	g, _ := taskspec.ParseSpec(taskspec.Worker, "1c")
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Command: "sh\xff", Args: []string{"-c", "{{(touch X)}}\n\x80"}, Env: map[string]string{"V": "\xfe<LOG_DIR>"}}
	jf := NewJobFile("application_1_0001", "alice", "/s", job, nil)
	jf.TaskResources = map[string]Resource{BinaryName: {Scheme: "hdfs", Path: "/c/tfyarn"}}
	jf.Commands = map[taskspec.TaskType][]string{taskspec.TensorBoard: {"tb", "--logdir", "/l\xc3"}}
	data, err := jf.Marshal()
	require.NoError(t, err)
	back, err := ParseJobFile(data)
	require.NoError(t, err)
	require.Equal(t, jf, back)
	require.Equal(t, []string{"tb", "--logdir", "/l\xc3"}, back.TaskCommand(taskspec.TensorBoard))
	require.Equal(t, []string{"sh\xff", "-c", "{{(touch X)}}\n\x80"}, back.TaskCommand(taskspec.Worker))
}

// The RM's web addresses and the web proxy's travel to the AM: only their
// peers may fetch its web UI (appmaster.WebAccessFor).
func TestShipConfCarriesTheWebProxy(t *testing.T) {
	web := map[string]string{
		"yarn.resourcemanager.webapp.address":           "localhost:28088",
		"yarn.resourcemanager.webapp.address.rm2":       "rm2.example:8088",
		"yarn.resourcemanager.webapp.https.address.rm2": "rm2.example:8090",
		"yarn.web-proxy.address":                        "proxy.example:9046",
		"yarn.http.policy":                              "HTTPS_ONLY",
		"hadoop.http.staticuser.user":                   "nobody",
	}
	with := map[string]string{"hadoop.http.authentication.signature.secret.file": "/etc/secret"}
	for k, v := range web {
		with[k] = v
	}
	require.Equal(t, web, ShipConf(hadoopconfWith(with)))
}
