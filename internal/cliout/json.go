package cliout

import (
	"encoding/json"
	"io"
)

// JSON writes v indented by two spaces, with a trailing newline and without
// HTML escaping (URLs with & stay readable).
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
