// Package localrun is `tfyarn run --local`: the job's tasks as processes on
// this machine, met through the same rendezvous server, executor and
// TF_CONFIG code a YARN job uses. What works locally therefore works the
// same way in containers, minus YARN: a user debugs a distributed script on
// a laptop and then submits it unchanged.
//
// Each task is an in-process executor (package executor) that runs the
// user's program as a child process; the program's output comes back line
// by line prefixed with its task ("[worker:1] ..."). The job's outcome
// follows the rule the ApplicationMaster applies: TensorFlow's (Judge) for
// jobs with a chief, ps or evaluator: the chief decides, or worker:0 when
// there is no chief, and once it has, the tasks that never end by
// themselves (ps, evaluator, tensorboard, PSS workers) are stopped; for
// generic commands every task must exit 0 (JudgeAll).
package localrun
