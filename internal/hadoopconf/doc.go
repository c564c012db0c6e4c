// Package hadoopconf reads a Hadoop client configuration directory
// (HADOOP_CONF_DIR) the way Hadoop's Java Configuration does: the XML
// <configuration><property> format, later files overriding earlier ones
// unless a value is final, ${var} expansion, and the handful of defaults
// from *-default.xml that a YARN/HDFS client actually relies on.
//
// It also answers the derived questions the rest of tfyarn asks: where the
// ResourceManager(s) are (HA rm-ids), where the NameNode(s) of fs.defaultFS
// are (HA nameservices), and whether the cluster is Kerberized.
//
// The package is pure: besides reading the XML files it does no I/O and no
// name resolution.
package hadoopconf
