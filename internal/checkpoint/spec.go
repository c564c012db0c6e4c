package checkpoint

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Names the program sees and writes.
const (
	// EnvDir is set in the program's environment to its local checkpoint
	// directory, an absolute path in its container.
	EnvDir = "TFYARN_CHECKPOINT_DIR"
	// EnvRestored is set to the ID of the checkpoint restored into EnvDir,
	// empty when none was.
	EnvRestored = "TFYARN_CHECKPOINT_RESTORED"
	// EnvStore is set by the AM in the launcher's environment: the Spec,
	// encoded. It holds no secret.
	EnvStore = "TFYARN_CHECKPOINT_STORE"
	// CompleteMark is the file the program creates in EnvDir once a
	// checkpoint there is whole. The launcher takes a copy of the
	// directory, then removes the mark; the program writes nothing more
	// there until the mark is gone.
	CompleteMark = ".tfyarn-complete"
	// SavedFile is written by the launcher into EnvDir once a checkpoint
	// is safe on HDFS: one JSON line, SavedRecord.
	SavedFile = ".tfyarn-saved"
	// StepFile, in a checkpoint's directory on HDFS, holds the step the
	// program named in CompleteMark (a decimal number); never restored.
	StepFile = ".tfyarn-step"
	// reservedPrefix starts the names in EnvDir that are tfyarn's, never
	// saved.
	reservedPrefix = ".tfyarn-"
)

// DefaultKeep is how many checkpoints of each task stay (--checkpoint-keep).
const DefaultKeep = 2

// MaxKeep bounds --checkpoint-keep.
const MaxKeep = 100

// Spec is what a launcher needs to keep its task's checkpoints: where, how
// many, from which jobs it may restore, and how to reach HDFS.
type Spec struct {
	// Dir is the job's checkpoint directory on HDFS, absolute.
	Dir string `json:"dir"`
	// Keep is how many checkpoints of each task stay.
	Keep int `json:"keep"`
	// App is the application saving checkpoints (part of every ID).
	App string `json:"app"`
	// Fresh (--checkpoint-fresh) restores only App's own checkpoints:
	// those of earlier jobs of the name are ignored.
	Fresh bool `json:"fresh,omitempty"`
	// Lead is the slot whose checkpoint every task restores first (the
	// chief's, else worker 0's): the one TensorFlow's chief writes.
	Lead string `json:"lead"`
	// User is the HDFS user (simple authentication).
	User string `json:"user"`
	// Conf is the slice of the Hadoop configuration that locates HDFS.
	Conf map[string]string `json:"conf,omitempty"`
}

// Encode is the Spec as EnvStore carries it: JSON in unpadded base64url,
// since the NodeManager writes a launch context's variables into a shell
// script between double quotes, unescaped.
func (s Spec) Encode() string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("checkpoint: encoding a spec: %v", err)) // strings, ints and a map of strings
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// maxSpecLen bounds an EnvStore value.
const maxSpecLen = 64 << 10

// ParseSpec decodes and checks an EnvStore value.
func ParseSpec(v string) (Spec, error) {
	if len(v) > maxSpecLen {
		return Spec{}, fmt.Errorf("%s: longer than %d bytes", EnvStore, maxSpecLen)
	}
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", EnvStore, err)
	}
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", EnvStore, err)
	}
	if err := CheckDir(s.Dir); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", EnvStore, err)
	}
	if s.Keep < 1 || s.Keep > MaxKeep || s.App == "" || s.Lead == "" || s.User == "" {
		return Spec{}, fmt.Errorf("%s: keep, app, lead or user missing or out of range", EnvStore)
	}
	return s, nil
}

// CheckDir refuses a checkpoint directory that is not an absolute, clean
// HDFS path below /.
func CheckDir(dir string) error {
	if !path.IsAbs(dir) || path.Clean(dir) != dir || dir == "/" {
		return fmt.Errorf("checkpoint directory %q: not an absolute HDFS path below /", dir)
	}
	return nil
}

// CheckJobName refuses a job name that cannot name a directory.
func CheckJobName(name string) error {
	switch {
	case name == "":
		return errors.New("the job has no name: give it one with --name")
	case name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > 200:
		return fmt.Errorf("job name %q cannot name a checkpoint directory: use letters, digits, '-', '_' or '.' and no '/'", name)
	}
	return nil
}

// Slot is the directory of task's checkpoints: "worker-1".
func Slot(task taskspec.TaskID) string { return fmt.Sprintf("%s-%d", task.Type, task.Index) }

// LeadSlot is the slot every task of job restores first: the chief's when
// the job has one, else worker 0's (TensorFlow's chief and PyTorch's rank
// 0 both write the checkpoint's shared part there).
func LeadSlot(job taskspec.Job) string {
	for _, g := range job.Tasks {
		if g.Type == taskspec.Chief && g.Instances > 0 {
			return Slot(taskspec.TaskID{Type: taskspec.Chief})
		}
	}
	return Slot(taskspec.TaskID{Type: taskspec.Worker})
}
