// Package architecture holds no code: its tests make the map of the repository executable.
//
//   - imports_test.go: the layers (which package may import which) and the arrows that must never
//     exist, checked against `go list -json ./...`.
//   - layout_test.go: README's Layout table names every package, and only packages that exist.
//   - cli_test.go: cmd/tfyarn's user-facing commands import the public Go API and pure output
//     helpers only; the files that run tfyarn's own sides (am, task, run --local) are named.
//   - funclen_test.go: no hand-written function is over 100 lines, so each reads as named steps.
//
// A new package fails both until it is given a layer and a row in the table.
package architecture
