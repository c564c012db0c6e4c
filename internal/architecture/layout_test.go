package architecture_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// layoutRows reads the table under README's "## Layout" heading: for each row, the directories
// its first cell names (module-relative, each in backquotes with a trailing slash).
func layoutRows(t *testing.T) [][]string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal(`docs/development.md has no "## Layout" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	dir := regexp.MustCompile("`([^`]+)/`")
	var rows [][]string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "|") || len(cells) < 3 {
			continue
		}
		var dirs []string
		for _, m := range dir.FindAllStringSubmatch(cells[1], -1) {
			dirs = append(dirs, m[1])
		}
		if len(dirs) > 0 {
			rows = append(rows, dirs)
		}
	}
	if len(rows) < 10 {
		t.Fatalf("docs/development.md's Layout table has %d rows naming directories: the check reads nothing", len(rows))
	}
	return rows
}

// TestLayoutTableIsTrue: every package is named in docs/development.md's Layout table, once; every directory
// the table names exists.
func TestLayoutTableIsTrue(t *testing.T) {
	pkgs := goList(t)
	named := map[string]int{}
	for _, row := range layoutRows(t) {
		for _, d := range row {
			named[d]++
			if st, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(d))); err != nil || !st.IsDir() {
				t.Errorf("docs/development.md's Layout table names %s/, which is not a directory of the repository", d)
			}
		}
	}
	for p := range pkgs {
		if p == "." {
			continue
		}
		switch named[p] {
		case 0:
			t.Errorf("package %s is not in docs/development.md's Layout table: add a row (or name it in its parent's row) saying what it is for", p)
		case 1:
		default:
			t.Errorf("docs/development.md's Layout table names %s/ %d times", p, named[p])
		}
	}
}
