package submit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The administrator's defaults (tfyarn.gpu-idle.*) fill what the job
// leaves unset; the job's own flags win; a bad value is refused.
func TestGPUIdleDefaults(t *testing.T) {
	conf := hadoopconf.New(func(string) (string, bool) { return "", false })
	conf.Set(ConfGPUIdleTimeout, "30m")
	conf.Set(ConfGPUIdleThreshold, "3")
	conf.Set(ConfGPUIdleAction, "warn")
	g, err := gpuIdleDefaults(conf, taskspec.GPUIdle{})
	require.NoError(t, err)
	require.Equal(t, taskspec.GPUIdle{Timeout: 30 * time.Minute, Threshold: 3, Warn: true}, g)
	g, err = gpuIdleDefaults(conf, taskspec.GPUIdle{Timeout: time.Hour, Threshold: 10})
	require.NoError(t, err)
	require.Equal(t, taskspec.GPUIdle{Timeout: time.Hour, Threshold: 10}, g, "the job's own flags win, its action with its timeout")
	g, err = gpuIdleDefaults(nil, taskspec.GPUIdle{})
	require.NoError(t, err)
	require.Zero(t, g)
	conf.Set(ConfGPUIdleTimeout, "soon")
	_, err = gpuIdleDefaults(conf, taskspec.GPUIdle{})
	require.ErrorContains(t, err, `tfyarn.gpu-idle.timeout="soon" in `)
	require.ErrorContains(t, err, "give a duration, e.g. 30m")
}
