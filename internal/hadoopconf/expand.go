package hadoopconf

import (
	"fmt"
	"strings"
)

// maxSubst is Configuration.MAX_SUBST: the number of ${var} replacements
// one value may need before we call it a loop.
const maxSubst = 20

// expand performs Hadoop's variable substitution on expr. It mirrors
// Configuration.substituteVars: replace the left-most ${var} that contains
// no '$', ' ' or nested '}', looking var up as ${env.NAME[:-|-default]}, a
// Java system property, or another key; stop at the first unbound variable;
// return expr unchanged when a value refers to itself.
func (c *Config) expand(expr string) (string, error) {
	eval := expr
	for s := 0; s < maxSubst; s++ {
		start, end := findSubVariable(eval)
		if start < 0 {
			return eval, nil
		}
		name := eval[start:end]
		val, ok := c.resolveVar(name)
		if !ok {
			// Hadoop leaves an unbound ${var} in place and stops there.
			return eval, nil
		}
		ref := eval[start-2 : end+1]
		if strings.Contains(val, ref) {
			// A value that contains its own reference would grow forever.
			return expr, nil
		}
		eval = eval[:start-2] + val + eval[end+1:]
	}
	return "", fmt.Errorf("variable substitution depth too large: %d in %q", maxSubst, expr)
}

func (c *Config) resolveVar(name string) (string, bool) {
	if strings.HasPrefix(name, "env.") && len(name) > len("env.") {
		if v, ok := c.resolveEnv(name[len("env."):]); ok {
			return v, true
		}
	} else if v, ok := c.sysProps[name]; ok {
		return v, true
	}
	return c.Raw(name)
}

// resolveEnv handles NAME, NAME:-default (default when unset or empty) and
// NAME-default (default when unset), the shell-like forms Hadoop 3 accepts.
func (c *Config) resolveEnv(spec string) (string, bool) {
	for i := 0; i < len(spec); i++ {
		switch {
		case spec[i] == ':' && i+1 < len(spec) && spec[i+1] == '-':
			if v, ok := c.lookupEnv(spec[:i]); ok && v != "" {
				return v, true
			}
			return spec[i+2:], true
		case spec[i] == '-':
			if v, ok := c.lookupEnv(spec[:i]); ok {
				return v, true
			}
			return spec[i+1:], true
		}
	}
	return c.lookupEnv(spec)
}

// findSubVariable returns the bounds of var in the left-most "${var}" of
// eval (start after "${", end at "}"), or -1, -1.
func findSubVariable(eval string) (int, int) {
	from := 0
	for {
		i := strings.Index(eval[from:], "${")
		if i < 0 {
			return -1, -1
		}
		start := from + i + 2
		j := start
		for ; j < len(eval); j++ {
			ch := eval[j]
			if ch == '}' || ch == '$' || ch == ' ' {
				break
			}
		}
		if j == len(eval) {
			return -1, -1
		}
		if eval[j] == '}' && j > start {
			return start, j
		}
		// "${}" or a '$'/' ' inside: resume just past the offending char,
		// which lets "${a${b}}" expand the inner ${b} first.
		from = j
		if eval[j] == '}' || eval[j] == ' ' {
			from = j + 1
		}
	}
}
