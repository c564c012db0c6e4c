// Package progressbar draws one upload's progress on a terminal, redrawing
// a single line in place, and draws nothing at all when the output is not a
// terminal (a pipe, a file, a CI log): scripts must never see it.
package progressbar
