// Package tasklogs is where tfyarn reads its tasks' logs: it chooses the
// source (a running application's NodeManagers, an ended one's aggregated
// files on HDFS, also for an application the ResourceManager forgot),
// prints them as Hadoop's `yarn logs` does, follows them live (tfyarn logs
// --follow, run's live output), and prefixes each line with its task.
//
// Its three leaves import nothing of tfyarn: nodemanager reads and follows
// a container's files from its NodeManager's web services; aggregated
// decodes Hadoop's aggregated log files (TFile, IFile, compressed or not);
// prefix puts "[worker:1] " before each line, for run --local too. The two
// decoders stay apart because they share nothing but the output format
// (aggregated.WriteHeader) and each has its own fuzz targets and inputs.
package tasklogs
