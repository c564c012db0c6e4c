//go:build e2e

package appmaster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/taskspec"
)

// On the real cluster the AM's rack source answers from the job file's
// slice of the configuration alone (what the AM has), with a rack for every
// NodeManager: YARN's default one, the test cluster having no topology
// script.
func TestE2EClusterRacksFromTheRM(t *testing.T) {
	c := clustertest.Require(t)
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{{Type: taskspec.Chief, Instances: 1}, {Type: taskspec.Worker, Instances: 1}, {Type: taskspec.PS, Instances: 1}}}
	jf := contract.NewJobFile("application_1_0001", "tfyarn", "/tmp/staging", job, conf)
	ask := clusterRacks(jf)
	require.NotNil(t, ask)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	racks, err := ask(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, racks)
	for host, rack := range racks {
		require.NotEmpty(t, host)
		require.Equal(t, "/default-rack", rack, host)
	}
}
