package authtolocal

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Configuration keys (core-site.xml) and their meaning in Hadoop.
const (
	// KeyRules holds the rules; unset (or empty) means DEFAULT on a
	// Kerberized cluster.
	KeyRules = "hadoop.security.auth_to_local"
	// KeyMechanism is "hadoop" (the default: a result holding '/' or '@'
	// is an error) or "mit" (any result; a name no rule maps stays as it is).
	KeyMechanism = "hadoop.security.auth_to_local.mechanism"
)

// Mechanism is how rules are evaluated.
type Mechanism int

const (
	// MechanismHadoop refuses results with '/' or '@' and names no rule maps.
	MechanismHadoop Mechanism = iota
	// MechanismMIT allows any result; a name no rule maps is kept whole.
	MechanismMIT
)

func (m Mechanism) String() string {
	if m == MechanismMIT {
		return "mit"
	}
	return "hadoop"
}

// ParseMechanism reads KeyMechanism's value: "hadoop" or "mit" in any case,
// empty meaning hadoop (Hadoop's default).
func ParseMechanism(s string) (Mechanism, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "hadoop":
		return MechanismHadoop, nil
	case "mit":
		return MechanismMIT, nil
	}
	return 0, fmt.Errorf("%s = %q is neither hadoop nor mit", KeyMechanism, s)
}

// Rules are parsed auth_to_local rules with their evaluation mechanism.
type Rules struct {
	list      []rule
	mechanism Mechanism
	// Source says where the rules come from, for messages ("hadoop.security.
	// auth_to_local from /etc/hadoop/core-site.xml"); empty for DEFAULT.
	Source string
}

// Default is what a Kerberized cluster without KeyRules uses: DEFAULT
// (evaluated as mechanism says, MechanismHadoop unless KeyMechanism is set).
func Default(mechanism Mechanism) *Rules {
	return &Rules{list: []rule{{isDefault: true, text: "DEFAULT"}}, mechanism: mechanism}
}

// Mechanism says how r is evaluated.
func (r *Rules) Mechanism() Mechanism { return r.mechanism }

// String lists the rules one per line, as Hadoop prints them.
func (r *Rules) String() string {
	texts := make([]string, len(r.list))
	for i, ru := range r.list {
		texts[i] = ru.text
	}
	return strings.Join(texts, "\n")
}

type rule struct {
	text      string // the rule as written, for messages
	isDefault bool
	// components is how many components (1 or 2) a name must have.
	components int
	format     string
	match      *javaRegexp // nil: no (match) part
	from       *javaRegexp // nil: no s/// part
	to         string
	global     bool
	lower      bool
}

// ParseError is rules text that Hadoop would refuse, or a Java regular
// expression tfyarn cannot evaluate as Java does.
type ParseError struct {
	Rule   string // the offending rule's text (or what remained unparsed)
	Reason string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("auth_to_local rule %q: %s", e.Rule, e.Reason)
}

// Parse reads rules as Hadoop's KerberosName.setRules does: rules follow one
// another, separated by any whitespace (newlines in a multi-line value
// included) or by nothing at all.
func Parse(text string, mechanism Mechanism) (*Rules, error) {
	out := &Rules{mechanism: mechanism}
	rest := javaTrim(text)
	for rest != "" {
		r, n, err := parseOne(rest)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) && n < 0 && len(out.list) > 0 {
				// What a rule could not take is not a rule of its own: say
				// which rule it follows (RULE:[1:$1]s/a/b leaves "s/a/b").
				pe.Reason += fmt.Sprintf("; it follows the rule %q, whose s/pattern/replacement/ needs its three '/' and whose (regex) cannot hold ')'", out.list[len(out.list)-1].text)
			}
			return nil, err
		}
		out.list = append(out.list, r)
		rest = rest[n:]
	}
	return out, nil
}

// javaTrim is Java's String.trim: it drops every character up to U+0020
// at both ends, control characters included.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// isJavaSpace is \s of java.util.regex without flags.
func isJavaSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\x0b' || c == '\f' || c == '\r'
}

// parseOne reads one rule at the start of s and says how many bytes it
// took. The grammar is Hadoop's: optional whitespace, then DEFAULT or
// RULE:[digits:format] with an optional (match) and an optional
// s/from/to/ with an optional g, then an optional '/' and an optional L.
// Every optional part is taken when it is complete and skipped otherwise,
// which is what Hadoop's greedy regular expression does.
func parseOne(s string) (rule, int, error) {
	i := 0
	for i < len(s) && isJavaSpace(s[i]) {
		i++
	}
	start := i
	invalid := func() (rule, int, error) {
		text := strings.TrimSpace(s)
		if len(text) > 80 {
			text = text[:80] + "..."
		}
		return rule{}, -1, &ParseError{Rule: text, Reason: "not DEFAULT nor RULE:[n:format](regex)s/pattern/replacement/[g][/L] (Hadoop: Invalid rule)"}
	}
	var r rule
	switch {
	case strings.HasPrefix(s[i:], "DEFAULT"):
		i += len("DEFAULT")
		r.isDefault = true
	case strings.HasPrefix(s[i:], "RULE:["):
		i += len("RULE:[")
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		digits := s[d:i]
		if i >= len(s) || s[i] != ':' {
			return invalid()
		}
		i++
		f := i
		for i < len(s) && s[i] != ']' {
			i++
		}
		if i >= len(s) {
			return invalid()
		}
		r.format = s[f:i]
		i++
		var match, from *string
		if i < len(s) && s[i] == '(' {
			if j := strings.IndexByte(s[i+1:], ')'); j >= 0 {
				m := s[i+1 : i+1+j]
				match = &m
				i += j + 2
			}
		}
		if strings.HasPrefix(s[i:], "s/") {
			if j := strings.IndexByte(s[i+2:], '/'); j >= 0 {
				pat := s[i+2 : i+2+j]
				if k := strings.IndexByte(s[i+2+j+1:], '/'); k >= 0 {
					r.to = s[i+2+j+1 : i+2+j+1+k]
					from = &pat
					i = i + 2 + j + 1 + k + 1
					if i < len(s) && s[i] == 'g' {
						r.global = true
						i++
					}
				}
			}
		}
		if i < len(s) && s[i] == '/' {
			i++
		}
		if i < len(s) && s[i] == 'L' {
			r.lower = true
			i++
		}
		r.text = strings.TrimSpace(s[start:i])
		n, err := strconv.ParseInt(digits, 10, 32)
		if err != nil {
			return rule{}, 0, &ParseError{Rule: r.text, Reason: fmt.Sprintf("the number of components %q is not a number (Hadoop: NumberFormatException)", digits)}
		}
		r.components = int(n)
		if match != nil {
			if r.match, err = compileJava(*match, true); err != nil {
				return rule{}, 0, &ParseError{Rule: r.text, Reason: "(" + *match + "): " + err.Error()}
			}
		}
		if from != nil {
			if r.from, err = compileJava(*from, false); err != nil {
				return rule{}, 0, &ParseError{Rule: r.text, Reason: "s/" + *from + "/: " + err.Error()}
			}
		}
		return r, i, nil
	default:
		return invalid()
	}
	// DEFAULT takes an optional "/" and "L" too, and ignores the L.
	if i < len(s) && s[i] == '/' {
		i++
	}
	if i < len(s) && s[i] == 'L' {
		i++
	}
	r.text = "DEFAULT"
	return r, i, nil
}

// javaRegexp is a Java regular expression that RE2 evaluates the same way.
type javaRegexp struct {
	source string
	re     *regexp.Regexp
	// anchoredAfterOne matches one character then the pattern, anchored
	// at the start: it finds the empty matches Java's replaceAll takes
	// right after a previous match and Go's ReplaceAll skips.
	anchoredAfterOne *regexp.Regexp
	// asciiOnly: the pattern uses (?i) or \b/\B, whose meaning differs
	// between Java and Go on non-ASCII letters.
	asciiOnly bool
	// groupNames maps Java's named groups to their numbers.
	groupNames map[string]int
}

// compileJava vets a Java regular expression and compiles it for Go; full
// asks for Java's Matcher.matches (the whole name), else find.
func compileJava(src string, full bool) (*javaRegexp, error) {
	norm, asciiOnly, err := vetJava(src)
	if err != nil {
		return nil, err
	}
	j := &javaRegexp{source: src, asciiOnly: asciiOnly}
	expr := norm
	if full {
		expr = `\A(?:` + norm + `)\z`
	}
	if j.re, err = regexp.Compile(expr); err != nil {
		return nil, fmt.Errorf("RE2 (Go's regexp) cannot compile it: %v", unwrapSyntax(err))
	}
	if !full {
		j.anchoredAfterOne = regexp.MustCompile(`\A(?s:.)(?:` + norm + `)`)
		j.groupNames = map[string]int{}
		for i, name := range j.re.SubexpNames() {
			if name != "" {
				j.groupNames[name] = i
			}
		}
	}
	return j, nil
}

func unwrapSyntax(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

// vetJava refuses what Java and RE2 read differently (or what only Java
// has) and returns the pattern for Go: an unterminated \Q is closed, as
// Java's runs to the end of the pattern.
func vetJava(src string) (string, bool, error) {
	asciiOnly := false
	inClass := false
	classStart := 0 // index right after "[" or "[^"
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\\' {
			if i+1 >= len(src) {
				break // RE2 refuses a trailing backslash, as Java does
			}
			e := src[i+1]
			switch {
			case e >= '0' && e <= '9':
				return "", false, fmt.Errorf(`\%c is a backreference or an octal escape in Java; RE2 has neither`, e)
			case e == 'Q':
				if inClass {
					return "", false, fmt.Errorf(`\Q...\E inside [...] is not supported by RE2`)
				}
				end := strings.Index(src[i+2:], `\E`)
				if end < 0 {
					return src + `\E`, asciiOnly, nil
				}
				i += 2 + end + 1
				continue
			case e == 'b' || e == 'B':
				if inClass {
					return "", false, fmt.Errorf(`\%c inside [...] is not supported`, e)
				}
				asciiOnly = true
			case e == 'v':
				return "", false, fmt.Errorf(`\v is vertical whitespace in Java and a vertical tab in RE2; write the characters you mean`)
			case e == 'p' || e == 'P':
				name, n := propertyName(src[i+2:])
				if !isGeneralCategory(name) {
					return "", false, fmt.Errorf(`\%c%s: only Unicode general categories (\p{L}, \p{Lu}, \pN...) mean the same in Java and RE2`, e, src[i+2:i+2+n])
				}
				i += 1 + n
				continue
			}
			i++
			continue
		}
		if inClass {
			switch {
			case c == '[':
				return "", false, fmt.Errorf(`'[' inside [...] nests or joins classes in Java and is a literal (or [:alpha:]) in RE2; escape it as \[`)
			case c == '&' && i+1 < len(src) && src[i+1] == '&':
				return "", false, fmt.Errorf(`&& inside [...] intersects classes in Java and is two literal '&' in RE2`)
			case c == ']' && i > classStart:
				inClass = false
			}
			continue
		}
		switch c {
		case '[':
			inClass = true
			classStart = i + 1
			if classStart < len(src) && src[classStart] == '^' {
				classStart++
			}
		case '{':
			if !isRepetition(src[i:]) {
				return "", false, fmt.Errorf(`a '{' that starts no repetition like {2}, {2,} or {1,3} is an error in Java and a literal in RE2; escape it as \{`)
			}
		case '(':
			if i+1 < len(src) && src[i+1] == '?' {
				ascii, err := vetGroup(src[i+2:])
				if err != nil {
					return "", false, err
				}
				asciiOnly = asciiOnly || ascii
			}
		}
	}
	return src, asciiOnly, nil
}

// vetGroup checks what follows "(?".
func vetGroup(s string) (asciiOnly bool, err error) {
	switch {
	case strings.HasPrefix(s, "P"):
		return false, fmt.Errorf(`(?P...) is Python/RE2 syntax that Java refuses; name a group (?<name>...)`)
	case strings.HasPrefix(s, "="), strings.HasPrefix(s, "!"), strings.HasPrefix(s, "<="),
		strings.HasPrefix(s, "<!"), strings.HasPrefix(s, ">"):
		return false, fmt.Errorf(`lookaround and atomic groups ((?=, (?!, (?<=, (?<!, (?>) have no RE2 equivalent`)
	case strings.HasPrefix(s, "<"):
		end := strings.IndexByte(s, '>')
		name := s[1:max(end, 1)]
		if end < 0 || !isJavaGroupName(name) {
			return false, fmt.Errorf(`a Java group name is a letter followed by letters and digits, in (?<name>...)`)
		}
		return false, nil
	}
	for _, f := range s {
		switch f {
		case ':', ')':
			return asciiOnly, nil
		case 'i':
			asciiOnly = true
		case 'm', 's', '-':
		case 'U':
			return false, fmt.Errorf(`the flag U means Unicode classes in Java and ungreedy in RE2`)
		default:
			return false, fmt.Errorf(`the flag %q is not supported by RE2 (only i, m and s mean the same)`, f)
		}
	}
	return asciiOnly, nil
}

func isJavaGroupName(s string) bool {
	if s == "" || !isASCIILetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isASCIILetter(s[i]) && !(s[i] >= '0' && s[i] <= '9') {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// propertyName reads the name after \p: "{Lu}" or one letter.
func propertyName(s string) (string, int) {
	if strings.HasPrefix(s, "{") {
		if end := strings.IndexByte(s, '}'); end > 0 {
			return s[1:end], end + 1
		}
		return "", len(s)
	}
	if s == "" {
		return "", 0
	}
	return s[:1], 1
}

var generalCategories = map[string]bool{
	"L": true, "Lu": true, "Ll": true, "Lt": true, "Lm": true, "Lo": true,
	"M": true, "Mn": true, "Mc": true, "Me": true,
	"N": true, "Nd": true, "Nl": true, "No": true,
	"P": true, "Pc": true, "Pd": true, "Ps": true, "Pe": true, "Pi": true, "Pf": true, "Po": true,
	"S": true, "Sm": true, "Sc": true, "Sk": true, "So": true,
	"Z": true, "Zs": true, "Zl": true, "Zp": true,
	"C": true, "Cc": true, "Cf": true, "Co": true, "Cs": true,
}

func isGeneralCategory(name string) bool { return generalCategories[name] }

// isRepetition says whether s (starting with '{') is {n}, {n,} or {n,m}.
func isRepetition(s string) bool {
	i := 1
	d := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == d {
		return false
	}
	if i < len(s) && s[i] == ',' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i < len(s) && s[i] == '}'
}
