// Package tensorflow is TensorFlow behind the framework seam: each task's
// TF_CONFIG, the TF1 placeholders, the reserved port held for TensorFlow's
// gRPC server (TF_GRPC_REUSE_PORT).
package tensorflow

import (
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Name is what --framework takes.
const Name = "tensorflow"

// TensorFlow's variables.
const (
	EnvTFConfig    = "TF_CONFIG"
	EnvTFReusePort = "TF_GRPC_REUSE_PORT"
)

// tensorFlow is today's behaviour: TF_CONFIG per task, the TF1
// placeholders in the arguments, the chief decides (by the job's shape).
type tensorFlow struct{}

// New returns the framework.
func New() framework.Framework { return tensorFlow{} }

func (tensorFlow) Name() string { return Name }

func (tensorFlow) TaskTypes() []taskspec.TaskType { return taskspec.TaskTypes() }

// Success: the chief's rule for a job shaped like distributed TensorFlow,
// else every task must succeed (successRuleOf).
func (tensorFlow) Success(job taskspec.Job) taskspec.SuccessRule { return successRuleOf(job) }

// Rules: the chief decides (ChiefPolicy), with the stop timeout of
// TensorFlow's servers.
func (tensorFlow) Rules() []framework.Rule {
	return []framework.Rule{{Name: taskspec.SuccessChief, Policy: func(taskspec.Job) success.Policy {
		return ChiefPolicy{StopTimeout: taskspec.TFStopTimeout}
	}}}
}

// Reserved: every task's TF_CONFIG is tfyarn's.
func (tensorFlow) Reserved(taskspec.Job) map[string]string {
	return map[string]string{EnvTFConfig: "the cluster and the task's place in it"}
}

// WorkersReplacedInPlace: the workers of a ParameterServerStrategy job are
// servers the chief dispatches to, at the addresses of its cluster spec.
func (tensorFlow) WorkersReplacedInPlace(job taskspec.Job) bool {
	types := make([]taskspec.TaskType, len(job.Tasks))
	for i, g := range job.Tasks {
		types[i] = g.Type
	}
	return ParameterServerShaped(types)
}

// Abilities: a script or a command, one process per task, every task
// needed.
func (tensorFlow) Abilities() framework.Abilities { return framework.Abilities{} }

// JobService: none.
func (tensorFlow) JobService(taskspec.Job, []byte) framework.SideService { return nil }

// Launch gives the task its TF_CONFIG and substitutes the placeholders.
// The reserved port is held until TensorFlow's gRPC server listens on it:
// the launcher sets TF_GRPC_REUSE_PORT (unless the user set it), which
// makes the server bind with SO_REUSEPORT, the reservation's option. Tasks
// outside the cluster (evaluator, tensorboard) and a user who turned the
// option off get the port freed before the program starts.
func (tensorFlow) Launch(t framework.Task) (framework.Launch, error) {
	tfConfig, err := tfConfig(t.Cluster, t.ID)
	if err != nil {
		return framework.Launch{}, err
	}
	reuse, set := framework.LookupEnv(t.Env, EnvTFReusePort)
	if !set {
		reuse = "true"
	}
	return framework.Launch{
		Argv:     substitutePlaceholders(t.Argv, t.Cluster, t.ID),
		Set:      map[string]string{EnvTFConfig: tfConfig},
		Fill:     map[string]string{EnvTFReusePort: "true"},
		HoldPort: t.ID.Type.InCluster() && boolEnv(reuse),
		Describe: fmt.Sprintf("TF_CONFIG=%s", tfConfig),
	}, nil
}

// boolEnv reads a switch the way TensorFlow does (ReadBoolFromEnvVar:
// "true" or "1", any case).
func boolEnv(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v == "true" || v == "1"
}
