package taskspec

import (
	"fmt"
	"strings"
)

// ClusterLimits is what a cluster can give one container, from the RM's
// maximum allocation and resource types. The zero value means "not known":
// Validate then checks the job only against itself.
type ClusterLimits struct {
	Known        bool
	MaxMemoryMiB int64
	MaxVCores    int32
	// KnowsGPUs reports whether the RM has the resource type yarn.io/gpu.
	// The RM silently drops resource types it does not know, so a GPU ask
	// to such a cluster would run without GPUs.
	KnowsGPUs bool
	MaxGPUs   int64
}

// ValidationError reports a job that cannot run. TaskType names the group
// at fault, empty when the job as a whole is; the message is one line that
// says what to do.
type ValidationError struct {
	TaskType TaskType
	Message  string
}

func (e *ValidationError) Error() string { return e.Message }

func invalid(t TaskType, format string, args ...any) error {
	return &ValidationError{TaskType: t, Message: fmt.Sprintf(format, args...)}
}

// Validate reports the first reason the job cannot run, checking the job
// itself and then, when limits are Known, each group against the cluster.
// Groups are checked in job order so the error is the same however Tasks was
// ordered.
func (j Job) Validate(limits ClusterLimits) error {
	if err := j.validateFields(); err != nil {
		return err
	}
	if len(j.Tasks) == 0 {
		return invalid("", "the job has no tasks; give at least one task group, e.g. --worker 1c")
	}
	groups := append([]TaskGroup(nil), j.Tasks...)
	SortGroups(groups)
	byType := map[TaskType]bool{}
	for _, g := range groups {
		if err := validateGroup(g); err != nil {
			return err
		}
		if byType[g.Type] {
			return invalid(g.Type, "%s is given twice; give one group per task type", g.Type)
		}
		byType[g.Type] = true
		if err := validLabel(g.Type, g.NodeLabel); err != nil {
			return err
		}
	}
	if err := j.StartAfter.validate(byType); err != nil {
		return err
	}
	if j.Restarts.Max < 0 {
		return invalid("", "--max-restarts %d is negative; give 0 (a program's failure fails the job) or more", j.Restarts.Max)
	}
	for _, c := range j.Restarts.RetryExitCodes {
		if c < 1 || c > 255 {
			return invalid("", "--retry-exit-codes: %d is not a program's failing exit code; give codes from 1 to 255", c)
		}
	}
	if c := j.Checkpoint; c != nil && (c.Keep < 0 || c.Keep > MaxCheckpointKeep) {
		return invalid("", "--checkpoint-keep %d: give 1 to %d", c.Keep, MaxCheckpointKeep)
	}
	if err := j.validateNodes(); err != nil {
		return err
	}
	if err := j.validateSpread(byType); err != nil {
		return err
	}
	if err := j.validateImages(byType); err != nil {
		return err
	}
	if err := j.Affinities.validate(j, byType); err != nil {
		return err
	}
	if !byType[Chief] && !byType[Worker] {
		return invalid("", "the job has no chief and no worker; add --chief or --worker, which run the training")
	}
	if byType[PS] && !byType[Worker] {
		return invalid(PS, "ps tasks serve variables to workers, but the job has no worker; add --worker or drop --ps")
	}
	if limits.Known {
		for _, g := range groups {
			if err := CheckFits(g, limits); err != nil {
				return err
			}
		}
	}
	return nil
}

// singleInstance are the types a job has at most one of: the chief (chief:0
// decides a SuccessChief job), the evaluator and TensorBoard.
var singleInstance = map[TaskType]bool{Chief: true, Evaluator: true, TensorBoard: true}

func validateGroup(g TaskGroup) error {
	r := g.Resources
	switch {
	case !g.Type.Known():
		return invalid(g.Type, "unknown task type %q; expected one of %s", g.Type, typeList())
	case g.Instances < 1:
		return invalid(g.Type, "%s has %d instances; give at least 1", g.Type, g.Instances)
	case g.Instances > MaxInstances:
		return invalid(g.Type, "%s has %d instances, more than the maximum of %d", g.Type, g.Instances, MaxInstances)
	case singleInstance[g.Type] && g.Instances > 1:
		return invalid(g.Type, "%s has %d instances; a job has at most 1 %s", g.Type, g.Instances, g.Type)
	case r.VCores < 1:
		return invalid(g.Type, "%s asks %d vcores per task; give at least 1", g.Type, r.VCores)
	case r.MemoryMiB < 1:
		return invalid(g.Type, "%s asks %d MiB per task; give at least 1 MiB", g.Type, r.MemoryMiB)
	case r.GPUs < 0:
		return invalid(g.Type, "%s asks %d GPUs per task; give 0 or more", g.Type, r.GPUs)
	}
	return nil
}

// CheckFits reports whether one task of g fits in the largest container the
// cluster hands out, with a one-line error naming the group, the request,
// the maximum and what to do.
func CheckFits(g TaskGroup, limits ClusterLimits) error {
	r := g.Resources
	if !limits.Known {
		return nil
	}
	switch {
	case r.VCores > limits.MaxVCores:
		return invalid(g.Type, "%s asks %d vcores per task but the cluster's maximum allocation is %d vcores; ask for fewer",
			g.Type, r.VCores, limits.MaxVCores)
	case r.MemoryMiB > limits.MaxMemoryMiB:
		return invalid(g.Type, "%s asks %s per task but the cluster's maximum allocation is %s; ask for less memory",
			g.Type, formatMemory(r.MemoryMiB), formatMemory(limits.MaxMemoryMiB))
	case r.GPUs > 0 && !limits.KnowsGPUs:
		return invalid(g.Type, "%s asks %s per task but the cluster does not schedule GPUs (no resource type yarn.io/gpu); drop the gpu part of the spec or use a GPU cluster",
			g.Type, plural(r.GPUs, "GPU"))
	case r.GPUs > limits.MaxGPUs:
		return invalid(g.Type, "%s asks %s per task but the cluster's maximum allocation is %s; ask for fewer",
			g.Type, plural(r.GPUs, "GPU"), plural(limits.MaxGPUs, "GPU"))
	}
	return nil
}

// maxNameLen bounds names that end up in the RM's state store and web UI.
const maxNameLen = 256

func (j Job) validateFields() error {
	switch {
	case len(j.Name) > maxNameLen:
		return invalid("", "job name is %d bytes long; give at most %d", len(j.Name), maxNameLen)
	case hasControl(j.Name):
		return invalid("", "job name %q has control characters", j.Name)
	case strings.ContainsFunc(j.Queue, isSpaceOrControl):
		return invalid("", "queue %q has spaces or control characters", j.Queue)
	case strings.ContainsFunc(j.AppType, isSpaceOrControl):
		return invalid("", "application type %q has spaces or control characters", j.AppType)
	case j.Command == "" && j.Script == "":
		return invalid("", "the job has nothing to run; give a command or a script")
	case j.Command != "" && j.Script != "":
		return invalid("", "the job has both a command (%q) and a script (%q); give one", j.Command, j.Script)
	}
	for k := range j.Env {
		switch {
		case !ValidEnvName(k):
			return invalid("", "environment variable name %q is invalid; a name is letters, digits and _, not starting with a digit", k)
		}
	}
	for i, a := range append([]string{j.Command}, j.Args...) {
		if strings.IndexByte(a, 0) >= 0 {
			return invalid("", "argument %d (%q) holds a NUL byte, which no program can receive; drop it", i, a)
		}
	}
	for k, v := range j.Env {
		if strings.IndexByte(v, 0) >= 0 {
			return invalid("", "environment variable %s holds a NUL byte, which no program can receive; drop it", k)
		}
	}
	if n := j.ProgramBytes(); n > MaxProgramBytes {
		return invalid("", "the command, its arguments and the environment are %d bytes; at most %d fit (ship long inputs with --files)", n, MaxProgramBytes)
	}
	return validLabel("", j.NodeLabel)
}

// MaxProgramBytes bounds what a job's program is given: its command,
// arguments and environment travel to every task's launcher in one
// message of the ApplicationMaster's.
const MaxProgramBytes = 256 << 10

// ProgramBytes is the size of the job's command, script, arguments and
// environment, as MaxProgramBytes counts it.
func (j Job) ProgramBytes() int {
	n := len(j.Command) + len(j.Script)
	for _, a := range j.Args {
		n += len(a) + 1
	}
	for k, v := range j.Env {
		n += len(k) + len(v) + 2
	}
	return n
}

// ValidEnvName reports whether name is a portable environment variable
// name (POSIX: letters, digits and '_', not starting with a digit). Other
// names cannot be exported by a shell, and YARN's launch script is one.
func ValidEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// validLabel follows YARN's NodeLabelUtil: a letter or digit, then letters,
// digits, '-' and '_', at most 255 characters.
func validLabel(t TaskType, label string) error {
	if label == "" {
		return nil
	}
	ok := len(label) <= 255
	for i := 0; ok && i < len(label); i++ {
		c := label[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		ok = alnum || i > 0 && (c == '-' || c == '_')
	}
	if ok {
		return nil
	}
	who := "the job's"
	if t != "" {
		who = string(t) + "'s"
	}
	return invalid(t, "%s node label %q is invalid; a label is a letter or digit followed by letters, digits, - or _", who, label)
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }
