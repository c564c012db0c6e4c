package submit

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// typeInfoAnswer stands in for an RM older than every test cluster (Hadoop 2.x, whose test
// cluster does not start on JDK 17: docs/hadoop-versions.md).
type typeInfoAnswer struct{ err error }

func (a typeInfoAnswer) GetResourceTypeInfo(context.Context) ([]*hadoopyarn.ResourceTypeInfoProto, error) {
	return nil, a.err
}

// What Hadoop 2.10's RPC server answers a method its protocol lacks, wrapped as the
// ApplicationClient wraps every failed call.
var noSuchMethod = &yarn.RMError{Method: "getResourceTypeInfo", Addr: "rm:8032", Err: &ipc.RemoteError{
	Class:   "org.apache.hadoop.ipc.RpcNoSuchMethodException",
	Message: "Unknown method getResourceTypeInfo called on interface org.apache.hadoop.yarn.api.ApplicationClientProtocolPB.",
	Code:    hadoopcommon.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD,
}}

func TestProbeFeatures(t *testing.T) {
	f, err := probeFeatures(context.Background(), typeInfoAnswer{})
	require.NoError(t, err)
	require.Equal(t, rmFeatures{resourceTypes: true, placement: true}, f, "an RM that lists its resource types")

	f, err = probeFeatures(context.Background(), typeInfoAnswer{err: noSuchMethod})
	require.NoError(t, err)
	require.Equal(t, rmFeatures{}, f, "an RM before Hadoop 3")

	down := errors.New("connection refused")
	_, err = probeFeatures(context.Background(), typeInfoAnswer{err: down})
	require.ErrorIs(t, err, down, "any other failure is the caller's")
}

func TestCheckFeaturesRefusesWhatAnOldRMLacks(t *testing.T) {
	worker := func(spec string) taskspec.TaskGroup {
		g, err := taskspec.ParseSpec(taskspec.Worker, spec)
		require.NoError(t, err)
		return g
	}
	ps := func() taskspec.TaskGroup {
		g, err := taskspec.ParseSpec(taskspec.PS, "1c")
		require.NoError(t, err)
		return g
	}
	apart, err := taskspec.ParseAffinities("ps=worker", true)
	require.NoError(t, err)
	const old = "the ResourceManager predates Hadoop 3 (it does not know getResourceTypeInfo)"
	for _, c := range []struct {
		name string
		job  taskspec.Job
		want string
	}{
		{"plain", taskspec.Job{Tasks: []taskspec.TaskGroup{worker("2x1c")}}, ""},
		{"gpu", taskspec.Job{Tasks: []taskspec.TaskGroup{worker("2x1c,1gpu")}},
			"worker asks 1 yarn.io/gpu per task, but " + old + " and has no resource types; drop the GPUs or use a cluster of Hadoop 3.1 or newer"},
		{"spread", taskspec.Job{Tasks: []taskspec.TaskGroup{worker("2x1c")}, Spread: "worker"},
			"--spread worker asks for YARN placement constraints, but " + old + " and has none; drop it or use a cluster of Hadoop 3.1 or newer"},
		{"apart", taskspec.Job{Tasks: []taskspec.TaskGroup{worker("2x1c"), ps()}, Affinities: apart},
			"--apart ps=worker asks for YARN placement constraints, but " + old + " and has none; drop it or use a cluster of Hadoop 3.1 or newer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, checkFeatures(Job{Job: c.job}, rmFeatures{resourceTypes: true, placement: true}), "Hadoop 3 has it all")
			err := checkFeatures(Job{Job: c.job}, rmFeatures{})
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			var ve *taskspec.ValidationError
			require.ErrorAs(t, err, &ve, "a usage error: exit code 2")
			require.Equal(t, c.want, err.Error())
		})
	}
}

// docs/hadoop-versions.md's example refusal is the one run prints.
func TestClaimsFeatureRefusal(t *testing.T) {
	section := clustertest.DocSection(t, "## What tfyarn asks the ResourceManager")
	line := regexp.MustCompile("(?m)^tfyarn: .*$").FindString(section)
	require.NotEmpty(t, line, "the example line")
	g, err := taskspec.ParseSpec(taskspec.Worker, "2x1c")
	require.NoError(t, err)
	err = checkFeatures(Job{Job: taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Spread: "worker"}}, rmFeatures{})
	require.Equal(t, line, "tfyarn: "+err.Error())
}
