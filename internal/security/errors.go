package security

import "fmt"

// FormatError reports malformed credentials storage. Context locates the
// problem (e.g. `token "hdfs"`), Detail says what is wrong with which field;
// neither ever contains token bytes.
type FormatError struct {
	Context string
	Detail  string
}

func (e *FormatError) Error() string {
	if e.Context == "" {
		return "security: credentials: " + e.Detail
	}
	return "security: credentials: " + e.Context + ": " + e.Detail
}

func formatErr(context, format string, args ...any) error {
	return &FormatError{Context: context, Detail: fmt.Sprintf(format, args...)}
}

// aliasContext names an entry for errors; aliases aren't secret but may be
// garbage of up to maxFieldLen bytes, so long ones are cut.
func aliasContext(what, alias string) string {
	const max = 64
	if len(alias) > max {
		alias = alias[:max] + "..."
	}
	return fmt.Sprintf("%s %q", what, alias)
}
