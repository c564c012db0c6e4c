package taskspec

import (
	"path"
	"regexp"
	"sort"
	"strings"
)

// Task containers in Docker images (--image, --mount): YARN's own Docker
// runtime (DockerLinuxContainerRuntime) starts them when the launch context
// asks for it; the ApplicationMaster stays on the default runtime.

// AllTypes is the key of Job.Images for every task type without one of its own.
const AllTypes = ""

// Mount is one bind mount into a task's image (--mount SRC:DST[:ro|rw]).
type Mount struct {
	Src      string // a path on the node
	Dst      string // where the task sees it
	ReadOnly bool
}

// String is the mount as YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS takes it.
func (m Mount) String() string {
	mode := "rw"
	if m.ReadOnly {
		mode = "ro"
	}
	return m.Src + ":" + m.Dst + ":" + mode
}

// imageRefPattern is Docker's image reference grammar:
// [REGISTRY[:PORT]/]NAME[/NAME...][:TAG][@sha256:DIGEST], NAME lower case.
var imageRefPattern = regexp.MustCompile(`^(?:[a-zA-Z0-9]+(?:[.-][a-zA-Z0-9]+)*(?::[0-9]{1,5})?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`)

// ValidImageName says whether name can be a Docker image reference.
func ValidImageName(name string) bool {
	if len(name) > 255 || !imageRefPattern.MatchString(name) {
		return false
	}
	// The first part is a registry only with a '.' or ':' (or as localhost);
	// otherwise it is part of the name, which is lower case.
	if first, _, ok := strings.Cut(name, "/"); ok && !strings.ContainsAny(first, ".:") && first != "localhost" {
		return first == strings.ToLower(first)
	}
	return true
}

// ParseImage reads one --image value: IMAGE for every task type, or
// TYPE=IMAGE for one type's.
func ParseImage(s string) (TaskType, string, error) {
	t, img := TaskType(AllTypes), s
	if k, v, ok := strings.Cut(s, "="); ok {
		t, img = TaskType(k), v
		if !knownType(t) {
			return "", "", invalid("", "--image %q: %q is not a task type; give IMAGE or TYPE=IMAGE with TYPE one of chief, worker, ps, evaluator, tensorboard", s, k)
		}
	}
	if !ValidImageName(img) {
		return "", "", invalid(t, "--image %q: %q is not a valid Docker image name (e.g. registry.example.com/ml/tf:2.15)", s, img)
	}
	return t, img, nil
}

func knownType(t TaskType) bool {
	for _, k := range TaskTypes() {
		if k == t {
			return true
		}
	}
	return false
}

// ParseMount reads one --mount value: SRC:DST[:ro|rw] (read-only when
// the mode is left out), both absolute paths.
func ParseMount(s string) (Mount, error) {
	parts := strings.Split(s, ":")
	m := Mount{ReadOnly: true}
	switch len(parts) {
	case 3:
		switch parts[2] {
		case "ro":
		case "rw":
			m.ReadOnly = false
		default:
			return Mount{}, invalid("", "--mount %q: the mode %q is neither ro nor rw", s, parts[2])
		}
	case 2:
	default:
		return Mount{}, invalid("", "--mount %q is not SRC:DST[:ro|rw]", s)
	}
	m.Src, m.Dst = parts[0], parts[1]
	for _, p := range []string{m.Src, m.Dst} {
		if !path.IsAbs(p) || path.Clean(p) != p || p == "/" || strings.ContainsAny(p, ",\n") {
			return Mount{}, invalid("", "--mount %q: %q is not an absolute, clean path below / (without commas)", s, p)
		}
	}
	return m, nil
}

// ImageFor is the image of type t's containers: its own, else the job's
// for every type, else "" (the default runtime).
func (j Job) ImageFor(t TaskType) string {
	if img, ok := j.Images[string(t)]; ok {
		return img
	}
	return j.Images[AllTypes]
}

// validateImages checks the images and mounts against the job's types.
func (j Job) validateImages(byType map[TaskType]bool) error {
	keys := make([]string, 0, len(j.Images))
	for k := range j.Images {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != AllTypes && !byType[TaskType(k)] {
			return invalid(TaskType(k), "--image %s=...: the job has no %s tasks", k, k)
		}
		if !ValidImageName(j.Images[k]) {
			return invalid(TaskType(k), "%q is not a valid Docker image name (e.g. registry.example.com/ml/tf:2.15)", j.Images[k])
		}
	}
	if len(j.Mounts) > 0 && len(j.Images) == 0 {
		return invalid("", "--mount needs --image: mounts go into the tasks' images")
	}
	seen := map[string]bool{}
	for _, m := range j.Mounts {
		if _, err := ParseMount(m.String()); err != nil {
			return err
		}
		if seen[m.Dst] {
			return invalid("", "--mount: %s is mounted twice", m.Dst)
		}
		seen[m.Dst] = true
	}
	return nil
}
