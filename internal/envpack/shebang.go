package envpack

import (
	"bytes"
	"path"
	"regexp"
	"strings"
)

// pythonRE matches interpreter names that can run the sh/Python polyglot below.
var pythonRE = regexp.MustCompile(`^python[0-9.]*w?$`)

// rewriteShebang returns content with its shebang made relative when it
// names an interpreter inside the environment (under one of prefixes);
// rel is the script's env-relative, slash-separated path. ok is false when
// nothing needed (or could be) rewritten.
//
// Python interpreters get the same polyglot header pip's own script maker
// (distlib) writes for long or spaced paths, with the interpreter found
// beside the script instead of at an absolute path:
//
//	#!/bin/sh
//	'''exec' "$(dirname -- "$0")/python3" "$0" "$@"
//	' '''
//
// sh runs the exec line (to sh the leading quotes are empty strings around
// exec); Python sees a string literal and goes on with the script. It works wherever YARN unpacks the
// env, without relying on PATH and without the kernel's shebang length limit.
// Other interpreters (bash, perl in conda envs) get #!/usr/bin/env NAME,
// which relies on the env's bin/ being on PATH, as it is in tasks.
func rewriteShebang(content []byte, rel string, prefixes []string) ([]byte, bool) {
	if !bytes.HasPrefix(content, []byte("#!")) {
		return nil, false
	}
	eol := bytes.IndexByte(content, '\n')
	if eol < 0 {
		eol = len(content)
	}
	line := strings.TrimRight(string(content[2:eol]), "\r")
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, false
	}
	interp, args := fields[0], fields[1:]
	inEnv := ""
	for _, p := range prefixes {
		if strings.HasPrefix(interp, p+"/") {
			inEnv = strings.TrimPrefix(interp, p+"/")
			break
		}
	}
	if inEnv == "" {
		return nil, false
	}
	name := path.Base(inEnv)
	var head string
	switch {
	case pythonRE.MatchString(name):
		target := relPath(path.Dir(rel), path.Clean(inEnv))
		var b strings.Builder
		b.WriteString("#!/bin/sh\n'''exec' \"$(dirname -- \"$0\")/")
		b.WriteString(shellQuoteInDouble(target))
		b.WriteString("\"")
		for _, a := range args {
			b.WriteString(" ")
			b.WriteString(shellQuote(a))
		}
		b.WriteString(" \"$0\" \"$@\"\n' '''")
		head = b.String()
		if strings.Contains(head[len("#!/bin/sh\n'''"):len(head)-3], "'''") || strings.Contains(head, "\\") {
			return nil, false // would break the Python string literal
		}
	case len(args) == 0:
		head = "#!/usr/bin/env " + name
	default:
		// env cannot pass arguments portably (Linux gives them as one word):
		// leave it for Relocate, which sees the prefix in the text.
		return nil, false
	}
	out := make([]byte, 0, len(head)+len(content)-eol)
	out = append(out, head...)
	out = append(out, content[eol:]...)
	return out, true
}

// relPath is the slash path from directory from to target, both relative to
// the env root.
func relPath(from, target string) string {
	if from == "." {
		return target
	}
	if target == "." {
		return strings.TrimSuffix(strings.Repeat("../", strings.Count(from, "/")+1), "/")
	}
	fp, tp := strings.Split(from, "/"), strings.Split(target, "/")
	i := 0
	for i < len(fp) && i < len(tp)-1 && fp[i] == tp[i] {
		i++
	}
	up := strings.Repeat("../", len(fp)-i)
	return up + strings.Join(tp[i:], "/")
}

// shellQuote single-quotes s for sh.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// shellQuoteInDouble escapes s for use inside double quotes.
func shellQuoteInDouble(s string) string {
	r := strings.NewReplacer(`"`, `\"`, "$", `\$`, "`", "\\`")
	return r.Replace(s)
}
