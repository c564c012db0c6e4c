package cliout

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table collects rows and writes them column-aligned. Cells are sanitised so
// a tab or newline inside a value (diagnostics often have both) cannot break
// the layout.
type Table struct {
	header []string
	rows   [][]string
}

// NewTable starts a table with the given column headings.
func NewTable(header ...string) *Table { return &Table{header: header} }

// Row appends one row; values are formatted with %v.
func (t *Table) Row(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = Cell(fmt.Sprint(c))
	}
	t.rows = append(t.rows, row)
}

// WriteTo writes the header and rows, two spaces between columns.
func (t *Table) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	tw := tabwriter.NewWriter(cw, 0, 0, 2, ' ', 0)
	if len(t.header) > 0 {
		fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	}
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	err := tw.Flush()
	return cw.n, err
}

// Cell makes s safe for one table cell: whitespace runs (tabs, newlines)
// become single spaces, and an empty value shows as "-".
func Cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	return s
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
