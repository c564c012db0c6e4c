package cliout

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// KeyValues writes "Key : value" lines aligned on the colon, the layout of
// `yarn application -status`, for single-object views.
type KeyValues struct {
	pairs [][2]string
}

// Add appends one line; value is formatted with %v.
func (kv *KeyValues) Add(key string, value any) {
	kv.pairs = append(kv.pairs, [2]string{key, fmt.Sprint(value)})
}

// WriteTo writes the lines. Values are left as they are (multi-line
// diagnostics stay readable), only the keys are aligned.
func (kv *KeyValues) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	tw := tabwriter.NewWriter(cw, 0, 0, 1, ' ', 0)
	for _, p := range kv.pairs {
		fmt.Fprintf(tw, "%s\t: %s\n", p[0], p[1])
	}
	err := tw.Flush()
	return cw.n, err
}
