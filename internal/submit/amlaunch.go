package submit

import (
	"strconv"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// envGoMemLimit is the Go runtime's soft memory limit, set for the AM.
const envGoMemLimit = "GOMEMLIMIT"

// amCommand runs the shipped binary as the AM. YARN localizes FILE
// resources with the owner's execute bit (FSDownload: 0500 for
// PRIVATE/APPLICATION, 0555 for PUBLIC), so no chmod is needed.
func amCommand() string {
	return "./" + contract.BinaryName + " am --job " + contract.JobFileName +
		" 1>" + yarn.LogDirVar + "/am.stdout 2>" + yarn.LogDirVar + "/am.stderr"
}

// submissionContext is the application as submitApplication carries it: the
// AM's attempts and lifetime, the shipped binary and job file, the AM's
// resources, queue, name, type and tags.
func submissionContext(job Job, id *hadoopyarn.ApplicationIdProto, stagingDir string, bin, jobFile hdfs.Resource) *hadoopyarn.ApplicationSubmissionContextProto {
	env := map[string]string{
		contract.EnvStagingDir: stagingDir,
		contract.EnvUser:       job.User,
		"HADOOP_USER_NAME":     job.User,
	}
	if job.AMMemoryMiB > 0 {
		// The Go runtime collects harder as the AM's heap nears 3/4 of its
		// container, well before YARN would kill it for memory (the rest is
		// stacks, the binary and what the runtime itself holds).
		env[envGoMemLimit] = strconv.FormatInt(job.AMMemoryMiB*3/4, 10) + "MiB"
	}
	if job.AMAttempts > 1 {
		env[contract.EnvAMAttempts] = strconv.Itoa(job.AMAttempts)
	}
	clc := &hadoopyarn.ContainerLaunchContextProto{
		LocalResources: []*hadoopyarn.StringLocalResourceMapProto{
			{Key: proto.String(contract.BinaryName), Value: bin.Proto()},
			{Key: proto.String(contract.JobFileName), Value: jobFile.Proto()},
		},
		Environment: yarn.EnvProto(env),
		Command:     []string{amCommand()},
	}
	app := &hadoopyarn.ApplicationSubmissionContextProto{
		ApplicationId:   id,
		ApplicationName: proto.String(job.Name),
		Queue:           proto.String(job.Queue),
		AmContainerSpec: clc,
		MaxAppAttempts:  proto.Int32(int32(max(job.AMAttempts, 1))),
		Resource:        yarn.NewResource(job.AMMemoryMiB, job.AMVCores, nil),
		ApplicationType: proto.String(job.AppType),
		ApplicationTags: job.Tags,

		// A later attempt adopts the tasks still running (appmaster/adopt.go).
		KeepContainersAcrossApplicationAttempts: proto.Bool(job.AMAttempts > 1),
	}
	if t := lifetimeSeconds(job.Timeout); t > 0 {
		app.ApplicationTimeouts = []*hadoopyarn.ApplicationTimeoutMapProto{{
			ApplicationTimeoutType: hadoopyarn.ApplicationTimeoutTypeProto_APP_TIMEOUT_LIFETIME.Enum(),
			Timeout:                proto.Int64(t),
		}}
	}
	// The job-wide NodeLabel is the tasks' (the AM puts it on their
	// requests): the AM's own container goes where --am-node-label says.
	if job.AMNodeLabel != "" {
		app.NodeLabelExpression = proto.String(job.AMNodeLabel)
	}
	if job.Priority > 0 {
		app.Priority = &hadoopyarn.PriorityProto{Priority: proto.Int32(job.Priority)}
	}
	return app
}
