// Package security holds Hadoop security material: delegation/AMRM/NM
// tokens and the Credentials container Hadoop stores them in (the "HDTS"
// token storage format used by HADOOP_TOKEN_FILE_LOCATION files and by
// ContainerLaunchContextProto.tokens).
//
// Token passwords and identifiers are secrets: nothing in this package puts
// them in an error, a log line or a String().
package security
