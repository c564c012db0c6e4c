package appmaster

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The AM asks the RM for the nodes' racks only for a job that can replace a
// worker in place (chief and ps: ParameterServerStrategy), and only where
// it can authenticate to the client protocol (not under Kerberos).
func TestClusterRacksOnlyWhereUsedAndReachable(t *testing.T) {
	job := func(types ...taskspec.TaskType) taskspec.Job {
		var j taskspec.Job
		for _, typ := range types {
			j.Tasks = append(j.Tasks, taskspec.TaskGroup{Type: typ, Instances: 1})
		}
		return j
	}
	pss := job(taskspec.Chief, taskspec.Worker, taskspec.PS)
	require.NotNil(t, clusterRacks(contract.JobFile{Job: pss}), "PSS on an insecure cluster")
	require.Nil(t, clusterRacks(contract.JobFile{Job: job(taskspec.Chief, taskspec.Worker)}), "MWMS: nothing is replaced in place")
	require.Nil(t, clusterRacks(contract.JobFile{Job: pss, Kerberos: &contract.JobKerberos{Principal: "alice@EXAMPLE.COM"}}), "Kerberos: no credential for the client protocol")
}
