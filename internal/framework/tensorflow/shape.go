package tensorflow

import "github.com/tfyarn/tfyarn/taskspec"

// TensorFlow's job shapes: what its task types mean together. The chief
// rule (ChiefPolicy) and the framework's default rule read them here.

// successRuleOf is the rule of a TensorFlow job whose user named none:
// the chief's (taskspec.SuccessChief) when the job is shaped like a
// distributed TensorFlow job (a chief, ps or evaluator group, or a Python
// script to run), else every task must succeed, which is what
// `--worker 3x… -- COMMAND` users of generic commands expect.
func successRuleOf(job taskspec.Job) taskspec.SuccessRule {
	if job.Script != "" {
		return taskspec.SuccessChief
	}
	for _, t := range []taskspec.TaskType{taskspec.Chief, taskspec.PS, taskspec.Evaluator} {
		if _, ok := job.Group(t); ok {
			return taskspec.SuccessChief
		}
	}
	return taskspec.SuccessAll
}

// ParameterServerShaped reports whether a job with these task types is a
// TF2 ParameterServerStrategy job: a chief (the coordinator) and ps tasks.
// Its workers are servers the coordinator dispatches to: they never end by
// themselves, and one that fails can be replaced alone at the same address.
func ParameterServerShaped(types []taskspec.TaskType) bool {
	var chief, ps bool
	for _, t := range types {
		chief, ps = chief || t == taskspec.Chief, ps || t == taskspec.PS
	}
	return chief && ps
}

// splitAfterDecider is what the chief rule does with the tasks still
// running when the decider (chief:0, else worker:0) has succeeded. types
// are the task types of the whole job (its shape), live the tasks still
// running.
//
//   - ps, evaluator and TensorBoard never end by themselves: stopped at
//     once;
//   - the workers of a ParameterServerStrategy job (a chief AND ps) are
//     servers blocked in server.join(): stopped at once;
//   - other workers (MultiWorkerMirroredStrategy: no ps; TF1 between-graph:
//     no chief) end by themselves shortly after the decider: they linger,
//     for the worker grace, and are stopped only if still running after
//     it. So do the ps of a TF1 job while one of its workers lingers: those
//     workers still read and update their variables there (the global step
//     that tells them to stop included), and would fail without them.
//
// stopNow and linger keep live's order.
func splitAfterDecider(types []taskspec.TaskType, live []taskspec.TaskID) (stopNow, linger []taskspec.TaskID) {
	pss := ParameterServerShaped(types)
	workersLinger := false
	for _, id := range live {
		workersLinger = workersLinger || (!pss && id.Type == taskspec.Worker)
	}
	for _, id := range live {
		switch {
		case id.Type == taskspec.Worker && !pss, id.Type == taskspec.PS && workersLinger:
			linger = append(linger, id)
		default:
			stopNow = append(stopNow, id)
		}
	}
	return stopNow, linger
}
