package submit

import (
	"strconv"
	"time"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The client configuration keys (core-site.xml or yarn-site.xml under
// HADOOP_CONF_DIR) with which an administrator gives every job of the
// cluster a --gpu-idle-timeout, --gpu-idle-threshold and --gpu-idle-action
// (fail or warn); the job's own flags override them.
const (
	ConfGPUIdleTimeout   = "tfyarn.gpu-idle.timeout"
	ConfGPUIdleThreshold = "tfyarn.gpu-idle.threshold"
	ConfGPUIdleAction    = "tfyarn.gpu-idle.action"
)

// gpuIdleDefaults fills what g leaves unset from the client configuration.
// A Timeout set by the job keeps its Warn too.
func gpuIdleDefaults(conf *hadoopconf.Config, g taskspec.GPUIdle) (taskspec.GPUIdle, error) {
	if conf == nil {
		return g, nil
	}
	bad := func(key, v, want string) error {
		return &taskspec.ValidationError{Message: key + "=" + strconv.Quote(v) + " in " + conf.Source(key) + ": give " + want}
	}
	if v, ok := conf.Get(ConfGPUIdleTimeout); ok && v != "" && g.Timeout == 0 {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return g, bad(ConfGPUIdleTimeout, v, "a duration, e.g. 30m")
		}
		g.Timeout = d
		if a, ok := conf.Get(ConfGPUIdleAction); ok && a != "" {
			if a != "fail" && a != "warn" {
				return g, bad(ConfGPUIdleAction, a, "fail or warn")
			}
			g.Warn = a == "warn"
		}
	}
	if v, ok := conf.Get(ConfGPUIdleThreshold); ok && v != "" && g.Threshold == 0 {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || p < 0 || p > 100 {
			return g, bad(ConfGPUIdleThreshold, v, "a percentage from 0 to 100, e.g. 5")
		}
		g.Threshold = p
	}
	return g, nil
}
