package main

import (
	"os"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
)

// loadConf reads --conf-dir, or else what the environment names
// (HADOOP_CONF_DIR, YARN_CONF_DIR, HADOOP_HOME), remembering which for messages.
func (e *env) loadConf() (*hadoopconf.Config, error) {
	if e.confDir != "" {
		e.confFrom = "--conf-dir=" + e.confDir
		if st, err := os.Stat(e.confDir); err != nil || !st.IsDir() {
			return nil, usagef("--conf-dir %s is not a directory; point it at the directory holding core-site.xml and yarn-site.xml", e.confDir)
		}
		conf, err := hadoopconf.LoadDir(e.confDir)
		if err != nil {
			return nil, &confError{err}
		}
		return conf, nil
	}
	e.confFrom = hadoopconf.EnvHadoopConfDir + "=" + os.Getenv(hadoopconf.EnvHadoopConfDir)
	if os.Getenv(hadoopconf.EnvHadoopConfDir) == "" {
		e.confFrom = "the environment"
	}
	conf, err := hadoopconf.Load()
	if err != nil {
		return nil, &confError{err}
	}
	return conf, nil
}
