package authtolocal

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// MapError is a principal the rules do not map to a user name, or a rule
// that fails on it (as Hadoop's getShortName throws).
type MapError struct {
	Principal string
	Rule      string // the rule that failed; empty when no rule applied
	Reason    string
	Source    string // where the rules come from, if known
}

func (e *MapError) Error() string {
	where := KeyRules
	if e.Source != "" {
		where = e.Source
	}
	switch {
	case e.Rule != "":
		return fmt.Sprintf("the auth_to_local rule %s cannot map the principal %s (%s): %s", e.Rule, e.Principal, where, e.Reason)
	case e.Reason != "":
		return fmt.Sprintf("cannot map the principal %s to a user name (%s): %s", e.Principal, where, e.Reason)
	}
	return fmt.Sprintf("no auth_to_local rule maps the principal %s to a user name (%s)", e.Principal, where)
}

// principal is a Kerberos name split as Hadoop's KerberosName does.
type principal struct {
	service, host, realm string
	hasHost, hasRealm    bool
}

// splitPrincipal reads "service[/host][@realm]", each part non-empty and
// free of '/' and '@'. ok is false for anything else; Hadoop then refuses a
// name with '@' and keeps one without as it is.
func splitPrincipal(name string) (p principal, ok bool) {
	rest := name
	cut := strings.IndexAny(rest, "/@")
	if cut < 0 {
		return principal{service: rest}, rest != ""
	}
	p.service, rest = rest[:cut], rest[cut:]
	if p.service == "" {
		return p, false
	}
	if rest[0] == '/' {
		rest = rest[1:]
		cut = strings.IndexAny(rest, "/@")
		if cut < 0 {
			cut = len(rest)
		}
		p.host, p.hasHost, rest = rest[:cut], true, rest[cut:]
		if p.host == "" {
			return p, false
		}
	}
	if rest == "" {
		return p, true
	}
	if rest[0] != '@' {
		return p, false
	}
	p.realm, p.hasRealm = rest[1:], true
	return p, p.realm != "" && !strings.ContainsAny(p.realm, "/@")
}

func (p principal) String() string {
	s := p.service
	if p.hasHost {
		s += "/" + p.host
	}
	if p.hasRealm {
		s += "@" + p.realm
	}
	return s
}

// Map gives the user name of name ("alice@EXAMPLE.COM", "nn/host@REALM")
// as Hadoop's HadoopKerberosName.getShortName does with these rules;
// defaultRealm is krb5.conf's default_realm, which DEFAULT maps.
func (r *Rules) Map(name, defaultRealm string) (string, error) {
	p, ok := splitPrincipal(name)
	if !ok {
		if strings.Contains(name, "@") {
			return "", &MapError{Principal: name, Source: r.Source, Reason: "it is not a Kerberos principal name (name[/host]@REALM)"}
		}
		return name, nil // Hadoop keeps a name without '@' it cannot split
	}
	if !p.hasHost && !p.hasRealm {
		return name, nil
	}
	// params[0] is the realm, then the components. Java formats a missing
	// realm as "null"; so does this, to map as Hadoop does.
	params := []string{"null", p.service}
	if p.hasRealm {
		params[0] = p.realm
	}
	if p.hasHost {
		params = append(params, p.host)
	}
	for _, ru := range r.list {
		out, applied, err := ru.apply(p, params, defaultRealm, r.mechanism)
		if err != nil {
			return "", &MapError{Principal: name, Rule: ru.text, Reason: err.Error(), Source: r.Source}
		}
		if applied {
			return out, nil
		}
	}
	if r.mechanism == MechanismMIT {
		return p.String(), nil
	}
	return "", &MapError{Principal: name, Source: r.Source}
}

// apply runs one rule; applied is false when the rule does not apply.
func (ru rule) apply(p principal, params []string, defaultRealm string, mech Mechanism) (out string, applied bool, err error) {
	if ru.isDefault {
		if !p.hasRealm || p.realm != defaultRealm {
			return "", false, nil
		}
		out = p.service
	} else {
		if len(params)-1 != ru.components {
			return "", false, nil
		}
		base, err := formatParams(ru.format, params)
		if err != nil {
			return "", false, err
		}
		for _, re := range []*javaRegexp{ru.match, ru.from} {
			if re != nil {
				if err := re.canEvaluate(base); err != nil {
					return "", false, err
				}
			}
		}
		if ru.match != nil && !ru.match.re.MatchString(base) {
			return "", false, nil
		}
		out = base
		if ru.from != nil {
			if out, err = ru.from.replace(base, ru.to, ru.global); err != nil {
				return "", false, err
			}
		}
	}
	if mech == MechanismHadoop && strings.ContainsAny(out, "/@") {
		return "", false, fmt.Errorf("the result %q holds '/' or '@', which %s=hadoop refuses (Hadoop: Non-simple name)", out, KeyMechanism)
	}
	if ru.lower {
		out = javaLowerEnglish(out)
	}
	return out, true, nil
}

// formatParams replaces $0 (the realm), $1 and $2 (the components) in
// format, as Hadoop's replaceParameters does.
func formatParams(format string, params []string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); {
		j := strings.IndexByte(format[i:], '$')
		if j < 0 {
			b.WriteString(format[i:])
			break
		}
		b.WriteString(format[i : i+j])
		i += j + 1
		d := i
		for i < len(format) && format[i] >= '0' && format[i] <= '9' {
			i++
		}
		num, err := strconv.ParseInt(format[d:i], 10, 32)
		if err != nil {
			return "", fmt.Errorf("bad format in username mapping: '$' followed by %q, not a number", format[d:i])
		}
		if num >= int64(len(params)) {
			return "", fmt.Errorf("index %d from %s is outside of the valid range 0 to %d", num, format, len(params)-1)
		}
		b.WriteString(params[num])
	}
	return b.String(), nil
}

// canEvaluate refuses a name on which Java's and Go's regular expressions
// could disagree: line terminators and other control characters (Java's
// '.', '$' and \s treat some of them differently), and non-ASCII letters
// under (?i) or \b (Java folds case in ASCII only, and its \b sees Unicode
// letters).
func (j *javaRegexp) canEvaluate(s string) error {
	for _, c := range s {
		switch {
		case c < ' ' || c == 0x7f || c == 0x85 || c == 0x2028 || c == 0x2029:
			return fmt.Errorf("the name %q holds a control character or line terminator, on which Java's and Go's regular expressions differ", s)
		case c > unicode.MaxASCII && j.asciiOnly:
			return fmt.Errorf("the name %q is not ASCII, and the regex %q uses (?i) or \\b, which Java and Go apply differently beyond ASCII", s, j.source)
		}
	}
	return nil
}

// replace is Java's Matcher.replaceFirst (global: replaceAll) with Java's
// replacement syntax: $n and ${name} name groups, a backslash quotes the
// next character.
func (j *javaRegexp) replace(s, to string, global bool) (string, error) {
	var matches [][]int
	if global {
		matches = j.allMatchesJava(s)
	} else if m := j.re.FindStringSubmatchIndex(s); m != nil {
		matches = [][]int{m}
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		b.WriteString(s[last:m[0]])
		if err := j.expand(&b, to, s, m); err != nil {
			return "", err
		}
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// allMatchesJava lists the matches Java's replaceAll replaces. Go's
// FindAll skips an empty match right after a previous match; Java takes
// it (s/x*/-/g on "axb" is "-a--b-" in Java). Both search the same
// positions otherwise, so the skipped ones are put back: after a non-empty
// match ending at e that the next match does not start at, Go's search at e
// found an empty match exactly when the pattern matches at e.
func (j *javaRegexp) allMatchesJava(s string) [][]int {
	goMatches := j.re.FindAllStringSubmatchIndex(s, -1)
	var out [][]int
	for k, m := range goMatches {
		out = append(out, m)
		e := m[1]
		if m[0] == e || (k+1 < len(goMatches) && goMatches[k+1][0] == e) {
			continue
		}
		// One character before e gives the pattern its left context (\b,
		// ^ with (?m)); e > 0 as the match is not empty.
		w := 1
		for w < e && !isRuneStart(s[e-w]) {
			w++
		}
		sub := s[e-w:]
		if am := j.anchoredAfterOne.FindStringSubmatchIndex(sub); am != nil && am[1] == w {
			shifted := make([]int, len(am))
			for i, v := range am {
				if v >= 0 {
					shifted[i] = v + e - w
				} else {
					shifted[i] = -1
				}
			}
			shifted[0] = e
			out = append(out, shifted)
		}
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// expand appends Java's replacement to for match m of s.
func (j *javaRegexp) expand(b *strings.Builder, to, s string, m []int) error {
	groups := len(m)/2 - 1
	for i := 0; i < len(to); {
		c := to[i]
		switch c {
		case '\\':
			i++
			if i >= len(to) {
				return fmt.Errorf("the replacement %q ends in a backslash (Java: character to be escaped is missing)", to)
			}
			// Copy the whole (UTF-8) character.
			n := 1
			for i+n < len(to) && !isRuneStart(to[i+n]) {
				n++
			}
			b.WriteString(to[i : i+n])
			i += n
		case '$':
			i++
			if i >= len(to) {
				return fmt.Errorf("the replacement %q ends in '$' (Java: Illegal group reference)", to)
			}
			var ref int
			if to[i] == '{' {
				i++
				n := i
				for i < len(to) && (isASCIILetter(to[i]) || to[i] >= '0' && to[i] <= '9') {
					i++
				}
				name := to[n:i]
				if name == "" || i >= len(to) || to[i] != '}' || !isJavaGroupName(name) {
					return fmt.Errorf("the replacement %q has a malformed ${name} group reference", to)
				}
				i++
				g, ok := j.groupNames[name]
				if !ok {
					return fmt.Errorf("the replacement %q names a group %q the pattern does not have", to, name)
				}
				ref = g
			} else {
				if to[i] < '0' || to[i] > '9' {
					return fmt.Errorf("the replacement %q has '$' not followed by a group number (Java: Illegal group reference); write \\$ for a dollar", to)
				}
				ref = int(to[i] - '0')
				i++
				// Java takes further digits while they name an existing group.
				for i < len(to) && to[i] >= '0' && to[i] <= '9' {
					next := ref*10 + int(to[i]-'0')
					if next > groups {
						break
					}
					ref = next
					i++
				}
				if ref > groups {
					return fmt.Errorf("the replacement %q refers to group %d, and the pattern has %d (Java: No group %d)", to, ref, groups, ref)
				}
			}
			if m[2*ref] >= 0 {
				b.WriteString(s[m[2*ref]:m[2*ref+1]])
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
	return nil
}

// javaLowerEnglish is Java's String.toLowerCase(Locale.ENGLISH): Unicode
// lower case, with capital dotted I becoming "i" and a combining dot and a
// capital sigma at the end of a word becoming the final sigma.
func javaLowerEnglish(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		switch r {
		case 'İ':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(rs, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma is Unicode's Final_Sigma condition, simplified to the cased
// letters around rs[i] (Java also skips case-ignorable characters).
func finalSigma(rs []rune, i int) bool {
	cased := func(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }
	before := i > 0 && cased(rs[i-1])
	after := i+1 < len(rs) && cased(rs[i+1])
	return before && !after
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > unicode.MaxASCII {
			return false
		}
	}
	return true
}
