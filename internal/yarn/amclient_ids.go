package yarn

import (
	"fmt"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// FormatAttemptID renders an attempt id as Hadoop's ApplicationAttemptId
// does: appattempt_<clusterTimestamp>_<%04d app>_<%06d attempt>.
func FormatAttemptID(id *hadoopyarn.ApplicationAttemptIdProto) string {
	if id == nil {
		return ""
	}
	app := id.GetApplicationId()
	return fmt.Sprintf("appattempt_%d_%04d_%06d", app.GetClusterTimestamp(), app.GetId(), id.GetAttemptId())
}

// FormatContainerID renders a container id as Hadoop's ContainerId does:
// container_[e<epoch>_]<clusterTimestamp>_<%04d app>_<%02d attempt>_<%06d seq>.
// The RM's epoch (bumped by work-preserving restarts) lives in the top bits
// of the 64-bit id.
func FormatContainerID(id *hadoopyarn.ContainerIdProto) string {
	if id == nil {
		return ""
	}
	att := id.GetAppAttemptId()
	app := att.GetApplicationId()
	if app == nil {
		app = id.GetAppId()
	}
	epoch := id.GetId() >> 40
	seq := id.GetId() & (1<<40 - 1)
	prefix := "container_"
	if epoch > 0 {
		prefix += fmt.Sprintf("e%02d_", epoch)
	}
	return fmt.Sprintf("%s%d_%04d_%02d_%06d", prefix, app.GetClusterTimestamp(), app.GetId(), att.GetAttemptId(), seq)
}
