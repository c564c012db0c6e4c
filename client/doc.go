// Package client is tfyarn's public Go API: it submits a job to YARN (the
// tfyarn binary itself is the ApplicationMaster), watches it and cleans up
// after it. The CLI's `tfyarn run` is a thin layer over it.
//
//	res, err := client.RunOnYarn(ctx, client.Job{Job: taskspec.Job{
//		Tasks:   []taskspec.TaskGroup{worker},
//		Command: "sh", Args: []string{"-c", "exit 0"},
//	}})
//
// Submit and Submission.Wait are the two halves of RunOnYarn for callers
// that want the application id before the job ends, or progress events.
package client
