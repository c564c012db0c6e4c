package hadoopconf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadEnv(t *testing.T) {
	hadoop := writeFiles(t, map[string]string{
		"core-site.xml":   siteXML(KeyDefaultFS, "hdfs://nn:8020", "who", "hadoop-${env.WHO}"),
		"yarn-site.xml":   siteXML(KeyRMHostname, "from-hadoop-dir"),
		"mapred-site.xml": "<not even xml",
	})
	yarn := writeFiles(t, map[string]string{"yarn-site.xml": siteXML(KeyRMHostname, "from-yarn-dir")})
	emptyYarn := t.TempDir()
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "etc", "hadoop"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "etc", "hadoop", "core-site.xml"), []byte(siteXML("home", "yes")), 0o644))

	tests := []struct {
		name    string
		env     []string
		rmHost  string
		check   string
		wantErr []string
	}{
		{name: "hadoop dir", env: []string{"HADOOP_CONF_DIR", hadoop, "WHO", "me"}, rmHost: "from-hadoop-dir"},
		{name: "yarn dir wins", env: []string{"HADOOP_CONF_DIR", hadoop, "YARN_CONF_DIR", yarn}, rmHost: "from-yarn-dir"},
		{name: "yarn dir without yarn-site", env: []string{"HADOOP_CONF_DIR", hadoop, "YARN_CONF_DIR", emptyYarn}, rmHost: "from-hadoop-dir"},
		{name: "hadoop home", env: []string{"HADOOP_HOME", home}, rmHost: "0.0.0.0", check: "home"},
		{name: "conf dir beats home", env: []string{"HADOOP_HOME", home, "HADOOP_CONF_DIR", hadoop}, rmHost: "from-hadoop-dir"},
		{name: "nothing set", wantErr: []string{"HADOOP_CONF_DIR is not set", "export HADOOP_CONF_DIR="}},
		{name: "empty value", env: []string{"HADOOP_CONF_DIR", ""}, wantErr: []string{"HADOOP_CONF_DIR is not set"}},
		{name: "missing dir", env: []string{"HADOOP_CONF_DIR", "/nonexistent/conf"},
			wantErr: []string{"HADOOP_CONF_DIR=/nonexistent/conf does not exist", "point HADOOP_CONF_DIR"}},
		{name: "missing yarn dir", env: []string{"HADOOP_CONF_DIR", hadoop, "YARN_CONF_DIR", "/nonexistent/y"},
			wantErr: []string{"YARN_CONF_DIR=/nonexistent/y does not exist"}},
		{name: "dir without files", env: []string{"HADOOP_CONF_DIR", emptyYarn}, wantErr: []string{"holds none of core-site.xml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadEnv(envOf(tt.env...))
			if tt.wantErr != nil {
				for _, w := range tt.wantErr {
					require.ErrorContains(t, err, w)
				}
				return
			}
			require.NoError(t, err)
			v, _ := c.Get(KeyRMHostname)
			require.Equal(t, tt.rmHost, v)
			if tt.check != "" {
				_, ok := c.Get(tt.check)
				require.True(t, ok)
			}
		})
	}

	c, err := LoadEnv(envOf("HADOOP_CONF_DIR", hadoop, "WHO", "me"))
	require.NoError(t, err)
	v, _ := c.Get("who")
	require.Equal(t, "hadoop-me", v)
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, file, content string
		wantErr             []string
	}{
		{name: "malformed", file: "core-site.xml", content: "<configuration><property><name>a</name></configuration>",
			wantErr: []string{"core-site.xml", "malformed XML"}},
		{name: "wrong root", file: "hdfs-site.xml", content: "<conf><property><name>a</name><value>b</value></property></conf>",
			wantErr: []string{"hdfs-site.xml", "top-level element is <conf>"}},
		{name: "empty", file: "yarn-site.xml", content: "",
			wantErr: []string{"yarn-site.xml", "empty file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{tt.file: tt.content})
			_, err := LoadDir(dir)
			for _, w := range tt.wantErr {
				require.ErrorContains(t, err, w)
			}
			require.ErrorContains(t, err, filepath.Join(dir, tt.file))
		})
	}
	_, err := LoadDir("/nonexistent/dir")
	require.ErrorContains(t, err, "does not exist")
}
