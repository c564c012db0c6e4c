package hadoopconf

// Keys tfyarn reads. Exported so callers don't scatter string literals.
const (
	KeyDefaultFS          = "fs.defaultFS"
	KeyAuthentication     = "hadoop.security.authentication"
	KeyRPCProtection      = "hadoop.rpc.protection"
	KeyRMHostname         = "yarn.resourcemanager.hostname"
	KeyRMHAEnabled        = "yarn.resourcemanager.ha.enabled"
	KeyRMHAIDs            = "yarn.resourcemanager.ha.rm-ids"
	KeyRMPrincipal        = "yarn.resourcemanager.principal"
	KeyNameNodePrincipal  = "dfs.namenode.kerberos.principal"
	KeyNameservices       = "dfs.nameservices"
	KeyHANameNodesPrefix  = "dfs.ha.namenodes."
	KeyNameNodeRPCAddress = "dfs.namenode.rpc-address"
	KeyYarnHTTPPolicy     = "yarn.http.policy"
)

// defaults are the entries of core-default.xml, hdfs-default.xml and
// yarn-default.xml that a client's behaviour depends on. We don't ship the
// full default files: a key missing here simply reads as unset.
var defaults = map[string]string{
	KeyDefaultFS:      "file:///",
	KeyAuthentication: "simple",
	KeyRPCProtection:  "authentication",
	"hadoop.tmp.dir":  "/tmp/hadoop-${user.name}",

	KeyRMHostname:                                   "0.0.0.0",
	"yarn.resourcemanager.address":                  "${yarn.resourcemanager.hostname}:8032",
	"yarn.resourcemanager.scheduler.address":        "${yarn.resourcemanager.hostname}:8030",
	"yarn.resourcemanager.resource-tracker.address": "${yarn.resourcemanager.hostname}:8031",
	"yarn.resourcemanager.admin.address":            "${yarn.resourcemanager.hostname}:8033",
	"yarn.resourcemanager.webapp.address":           "${yarn.resourcemanager.hostname}:8088",
	"yarn.resourcemanager.webapp.https.address":     "${yarn.resourcemanager.hostname}:8090",
	KeyRMHAEnabled:                                  "false",
	KeyYarnHTTPPolicy:                               "HTTP_ONLY",
}

// deprecatedKeys maps old names still found in long-lived site files to
// their current names; a value under the old name counts for the new one.
var deprecatedKeys = map[string]string{
	"fs.default.name": KeyDefaultFS,
}
