// Package client is tfyarn's public Go API: it submits a job to YARN (the
// tfyarn binary itself is the ApplicationMaster), watches it and cleans up
// after it. The CLI's `tfyarn run` is a thin layer over it.
//
//	res, err := client.RunOnYarn(ctx, client.Connection{}, client.Job{Job: taskspec.Job{
//		Tasks:   []taskspec.TaskGroup{worker},
//		Command: "sh", Args: []string{"-c", "exit 0"},
//	}})
//
// A Job is what to run; a Connection where and as whom (the Hadoop client
// configuration, the user or Kerberos principal, timeouts); Callbacks what
// the caller is told on the way. Connect gives a Client: Client.Submit and
// Submission.Wait are the two halves of RunOnYarn for callers that want the
// application id before the job ends, or progress events; List, Status,
// Kill, Logs, Cluster and the cache methods are the CLI's other commands.
//
// This package is the API only: types and calls, each a thin call into
// the engine under internal/ (internal/submit stages, ships and submits,
// internal/placement checks where the job can run, internal/follow follows
// it, internal/tasklogs reads its logs, internal/clusterquery asks about
// the cluster). The job's and the cluster's reports are the public packages
// jobreport and clusterinfo, whose types the internal code fills directly.
package client
