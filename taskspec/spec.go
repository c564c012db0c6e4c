package taskspec

import (
	"fmt"
	"math"
	"strings"
)

// Defaults and bounds of the spec grammar, in the one place `--help` reads
// them from.
const (
	// SpecGrammar is the grammar of one task-type flag.
	SpecGrammar = "[N x] <vcores>c [, <mem>g|<mem>m] [, <k>gpu]"

	DefaultInstances = 1
	DefaultMemoryMiB = 2048 // 2 GiB: enough for a Python interpreter with TensorFlow imported
	DefaultGPUs      = 0

	MaxInstances = 10000 // per group: a typo guard; the rendezvous and the AM's core are measured at 5,000 and 10,000 tasks (bench/results/scale-sim.md, core.md)
)

// SpecHelp explains the grammar, its defaults and the accepted variations,
// for `--help`.
const SpecHelp = `Task spec: ` + SpecGrammar + `
  4c,2g          1 instance, 4 vcores, 2 GiB
  8x4c           8 instances, 4 vcores, default memory (2 GiB)
  2x4c,16g,1gpu  2 instances, 4 vcores, 16 GiB, 1 yarn.io/gpu
  3x1c,256m      3 instances, 1 vcore, 256 MiB
Defaults: 1 instance, 2 GiB, 0 GPUs; vcores are required. At most 10000 instances.
g means GiB and m MiB (1g = 1024m); g may be fractional (1.5g = 1536m, rounded up
to whole MiB). Units and the x are case-insensitive; gb/gib, mb/mib and gpus are
accepted too; spaces around commas and around the x are ignored. Memory and GPU
parts may come in either order after the vcores.`

// SpecError reports a task spec that does not parse. Part is the piece of
// Spec at fault (empty when the spec as a whole is); Reason quotes it and
// says what was expected.
type SpecError struct {
	TaskType TaskType
	Spec     string
	Part     string
	Reason   string
}

func (e *SpecError) Error() string {
	if e.TaskType == "" {
		return fmt.Sprintf("spec %q: %s", e.Spec, e.Reason)
	}
	return fmt.Sprintf("%s spec %q: %s", e.TaskType, e.Spec, e.Reason)
}

// ParseSpec parses one task type's spec (see SpecHelp) into a group of that
// type. Only the grammar is checked here; Job.Validate checks the job as a
// whole and against the cluster.
func ParseSpec(t TaskType, spec string) (TaskGroup, error) {
	fail := func(part, format string, args ...any) (TaskGroup, error) {
		return TaskGroup{}, &SpecError{TaskType: t, Spec: spec, Part: part, Reason: fmt.Sprintf(format, args...)}
	}
	g := TaskGroup{
		Type:      t,
		Instances: DefaultInstances,
		Resources: Resources{MemoryMiB: DefaultMemoryMiB, GPUs: DefaultGPUs},
	}
	if strings.TrimSpace(spec) == "" {
		return fail("", "empty spec; expected %s, e.g. 4c,2g", SpecGrammar)
	}
	parts := strings.Split(spec, ",")

	first := strings.TrimSpace(parts[0])
	vcoresPart := first
	if i := strings.IndexAny(first, "xX"); i >= 0 {
		countPart := strings.TrimSpace(first[:i])
		n, ok := parseWhole(countPart)
		switch {
		case !ok:
			return fail(first, "bad instance count %q in %q; expected <N>x<vcores>c, e.g. 8x4c", countPart, first)
		case n < 1:
			return fail(first, "instance count %q must be at least 1", countPart)
		case n > MaxInstances:
			return fail(first, "instance count %q is more than the maximum of %d", countPart, MaxInstances)
		}
		g.Instances = int(n)
		vcoresPart = strings.TrimSpace(first[i+1:])
	}
	number, unit := splitUnit(vcoresPart)
	if !strings.EqualFold(unit, "c") {
		if _, known := sizeUnits[strings.ToLower(unit)]; known && number != "" {
			return fail(first, "%q comes before the vcores; expected %s, vcores first, e.g. 4c,2g", first, SpecGrammar)
		}
		return fail(first, "bad vcores %q; expected <N>c, e.g. 4c", vcoresPart)
	}
	vcores, ok := parseWhole(number)
	switch {
	case !ok:
		return fail(first, "bad vcores %q; expected <N>c with a whole number, e.g. 4c", vcoresPart)
	case vcores < 1:
		return fail(first, "vcores %q must be at least 1", vcoresPart)
	case vcores > math.MaxInt32:
		return fail(first, "vcores %q is too large", vcoresPart)
	}
	g.Resources.VCores = int32(vcores)

	seen := map[string]string{}
	for _, raw := range parts[1:] {
		part := strings.TrimSpace(raw)
		if part == "" {
			return fail(part, "empty part after a comma; expected <N>g, <N>m or <N>gpu")
		}
		number, unit := splitUnit(part)
		kind, known := sizeUnits[strings.ToLower(unit)]
		if !known || number == "" {
			return fail(part, "unknown size %q; expected <N>g, <N>m or <N>gpu", part)
		}
		if prev, dup := seen[kind]; dup {
			return fail(part, "%s given twice (%q and %q)", kind, prev, part)
		}
		seen[kind] = part
		switch kind {
		case "vcores":
			return fail(part, "vcores given twice (%q and %q)", vcoresPart, part)
		case "memory":
			mib, reason := parseMemory(number, strings.ToLower(unit)[0])
			if reason != "" {
				return fail(part, "memory %q %s", part, reason)
			}
			g.Resources.MemoryMiB = mib
		case "GPUs":
			n, ok := parseWhole(number)
			if !ok {
				return fail(part, "bad GPU count %q; expected a whole number, e.g. 1gpu", part)
			}
			g.Resources.GPUs = n
		}
	}
	return g, nil
}

// sizeUnits maps each accepted unit (lower case) to what it sizes.
var sizeUnits = map[string]string{
	"c": "vcores",
	"g": "memory", "gb": "memory", "gi": "memory", "gib": "memory",
	"m": "memory", "mb": "memory", "mi": "memory", "mib": "memory",
	"gpu": "GPUs", "gpus": "GPUs",
}

// splitUnit splits "16g" into "16" and "g": the leading digits and dots,
// then the rest.
func splitUnit(s string) (number, unit string) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	return s[:i], s[i:]
}

// maxDigits keeps every parsed number far from int64 overflow, even times
// 1024.
const maxDigits = 15

// parseWhole accepts only plain decimal digits: no signs, spaces, or
// exponents, which strconv would partly accept.
func parseWhole(s string) (int64, bool) {
	if s == "" || len(s) > maxDigits {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}

// parseMemory turns the number before a g or m unit into MiB. The returned
// reason, when not empty, completes `memory "<part>" ...`.
func parseMemory(number string, unit byte) (int64, string) {
	whole, frac, hasFrac := strings.Cut(number, ".")
	if whole == "" && hasFrac {
		whole = "0"
	}
	w, ok := parseWhole(whole)
	if !ok {
		return 0, "is not a number; expected e.g. 2g or 512m"
	}
	var mib int64
	switch unit {
	case 'm':
		if hasFrac {
			return 0, "is not a whole number of MiB; expected e.g. 512m"
		}
		mib = w
	case 'g':
		mib = w * 1024
		if hasFrac {
			const maxFracDigits = 9
			f, ok := parseWhole(frac)
			if !ok || len(frac) > maxFracDigits {
				return 0, "is not a number; expected e.g. 2g or 1.5g"
			}
			scale := int64(math.Pow10(len(frac)))
			mib += (f*1024 + scale - 1) / scale // round up: never give a task less than it asked for
		}
	}
	if mib < 1 {
		return 0, "must be at least 1 MiB"
	}
	return mib, ""
}
