package hadoopconf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Environment variables that locate the configuration.
const (
	EnvHadoopConfDir = "HADOOP_CONF_DIR"
	EnvYarnConfDir   = "YARN_CONF_DIR"
	EnvHadoopHome    = "HADOOP_HOME"
)

// Files read from the configuration directory, in override order (later
// wins). mapred-site.xml is deliberately not read: nothing of ours uses it.
var (
	hadoopFiles = []string{"core-site.xml", "hdfs-site.xml"}
	yarnFile    = "yarn-site.xml"
)

// ErrNoConfDir is returned (wrapped) when no configuration directory is named
// by the environment.
var ErrNoConfDir = errors.New("no Hadoop configuration directory")

// Load reads the client configuration located by the process environment.
func Load() (*Config, error) { return LoadEnv(os.LookupEnv) }

// LoadEnv reads the client configuration located by env: HADOOP_CONF_DIR,
// else $HADOOP_HOME/etc/hadoop; yarn-site.xml comes from YARN_CONF_DIR when
// that is set and holds one. env also serves ${env.NAME} expansion.
func LoadEnv(env func(string) (string, bool)) (*Config, error) {
	dir, from := confDirFromEnv(env)
	if dir == "" {
		return nil, fmt.Errorf("hadoopconf: %w: %s is not set (nor %s); "+
			"export %s=<directory holding core-site.xml and yarn-site.xml>, "+
			"e.g. by sourcing .testcluster/env.sh after 'make cluster-up'",
			ErrNoConfDir, EnvHadoopConfDir, EnvHadoopHome, EnvHadoopConfDir)
	}
	if err := checkDir(dir, from); err != nil {
		return nil, err
	}
	yarnDir := dir
	if y, ok := env(EnvYarnConfDir); ok && y != "" {
		if err := checkDir(y, EnvYarnConfDir); err != nil {
			return nil, err
		}
		if exists(filepath.Join(y, yarnFile)) {
			yarnDir = y
		}
	}
	return loadFiles(env, dir, yarnDir)
}

// LoadDir reads core-site.xml, hdfs-site.xml and yarn-site.xml from dir,
// expanding ${env.NAME} from the process environment.
func LoadDir(dir string) (*Config, error) {
	if err := checkDir(dir, "configuration directory"); err != nil {
		return nil, err
	}
	return loadFiles(os.LookupEnv, dir, dir)
}

func confDirFromEnv(env func(string) (string, bool)) (dir, from string) {
	if d, ok := env(EnvHadoopConfDir); ok && d != "" {
		return d, EnvHadoopConfDir
	}
	if h, ok := env(EnvHadoopHome); ok && h != "" {
		return filepath.Join(h, "etc", "hadoop"), "$" + EnvHadoopHome + "/etc/hadoop"
	}
	return "", ""
}

func checkDir(dir, from string) error {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("hadoopconf: %s=%s does not exist; point %s at the directory holding core-site.xml and yarn-site.xml",
				from, dir, EnvHadoopConfDir)
		}
		return fmt.Errorf("hadoopconf: %s: %w", from, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("hadoopconf: %s=%s is not a directory; point %s at the directory holding core-site.xml and yarn-site.xml",
			from, dir, EnvHadoopConfDir)
	}
	return nil
}

func loadFiles(env func(string) (string, bool), dir, yarnDir string) (*Config, error) {
	c := New(env)
	var paths []string
	for _, name := range hadoopFiles {
		paths = append(paths, filepath.Join(dir, name))
	}
	paths = append(paths, filepath.Join(yarnDir, yarnFile))
	for _, p := range paths {
		if !exists(p) {
			// Any single file may be absent (an HDFS-less or YARN-less client
			// is legitimate); only a directory with none of them is suspect.
			continue
		}
		if err := c.AddFile(p); err != nil {
			return nil, err
		}
	}
	if len(c.files) == 0 {
		return nil, fmt.Errorf("hadoopconf: %s holds none of core-site.xml, hdfs-site.xml, yarn-site.xml; is %s pointing at the right directory?",
			dir, EnvHadoopConfDir)
	}
	return c, nil
}

func exists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}
