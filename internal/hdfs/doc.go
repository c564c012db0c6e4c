// Package hdfs puts what a tfyarn job needs onto HDFS and describes it as YARN
// LocalResources: a per-user content-addressed cache for large, reused files
// (the packed Python environment), closed to other users but for what holds
// nothing of the user's (Access), or a cache directory shared by all users
// whose entries are used only as judgeEntry says and made everyone's by an
// administrator (SharedCache.Adopt), a per-application staging directory for
// everything else, the job history (private), and the cache maintenance
// behind `tfyarn cache`.
//
// Data travels through github.com/colinmarc/hdfs/v2. That client has no
// contexts and no way to rename without overwriting, so this package
//
//   - bounds every NameNode and DataNode socket operation with a deadline
//     (Options.IOTimeout) and runs NameNode calls so that a cancelled ctx
//     returns at once (the abandoned call ends by itself within that bound);
//   - publishes cache entries with a non-overwriting rename2 sent over
//     tfyarn's own ipc client (with our generated messages, yarnpb/hadoophdfs,
//     as are delete and getServerDefaults), which is what makes concurrent
//     uploads of the same file safe: the loser of the race sees
//     FileAlreadyExistsException and adopts the winner's file, so a
//     LocalResource handed to YARN is never replaced under it (its timestamp
//     would stop matching).
//
// On a Kerberized cluster it authenticates with GSSAPI (Options.Kerberos: a
// ticket cache or keytab login), as colinmarc/hdfs does, on the NameNode and
// DataNode connections; or, with delegation tokens only (Options.Tokens),
// with DIGEST-MD5 to the NameNode, on colinmarc's connections through
// ipc.ForeignClientConn, and with the NameNode's block tokens to the
// DataNodes.
package hdfs
