package hadoopconf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// siteXML renders properties as a Hadoop site file. A key ending in "!" is
// written final.
func siteXML(props ...string) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<?xml-stylesheet type=\"text/xsl\" href=\"configuration.xsl\"?>\n<configuration>\n")
	for i := 0; i+1 < len(props); i += 2 {
		name, final := strings.CutSuffix(props[i], "!")
		fmt.Fprintf(&b, "  <property>\n    <name>%s</name>\n    <value>%s</value>\n", name, props[i+1])
		if final {
			b.WriteString("    <final>true</final>\n")
		}
		b.WriteString("    <description>ignored</description>\n  </property>\n")
	}
	b.WriteString("</configuration>\n")
	return b.String()
}

// writeFiles writes name → content into a fresh directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

// envOf builds an env lookup from pairs.
func envOf(pairs ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// confOf loads a single yarn-site.xml made of props, with env.
func confOf(t *testing.T, env func(string) (string, bool), props ...string) *Config {
	t.Helper()
	c := New(env)
	require.NoError(t, c.AddXML("test-site.xml", strings.NewReader(siteXML(props...))))
	return c
}
