package taskspec

// TensorFlow's job shapes, kept here, being public Go API, from when the
// job model held them: tfyarn's own code asks the TensorFlow framework
// (internal/framework/tensorflow, whose chief rule applies them), and a test
// there holds these copies equal to its own.

// SplitAfterDecider is what SuccessChief does with the tasks still running
// when the decider (chief:0, else worker:0) has succeeded. types are the
// task types of the whole job (its shape), live the tasks still running.
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
func SplitAfterDecider(types []TaskType, live []TaskID) (stopNow, linger []TaskID) {
	pss := ParameterServerShaped(types)
	workersLinger := false
	for _, id := range live {
		workersLinger = workersLinger || (!pss && id.Type == Worker)
	}
	for _, id := range live {
		switch {
		case id.Type == Worker && !pss, id.Type == PS && workersLinger:
			linger = append(linger, id)
		default:
			stopNow = append(stopNow, id)
		}
	}
	return stopNow, linger
}

// ParameterServerShaped reports whether a job with these task types is a
// TF2 ParameterServerStrategy job: a chief (the coordinator) and ps tasks.
// Its workers are servers the coordinator dispatches to: they never end by
// themselves, and one that fails can be replaced alone at the same address.
func ParameterServerShaped(types []TaskType) bool {
	var chief, ps bool
	for _, t := range types {
		chief, ps = chief || t == Chief, ps || t == PS
	}
	return chief && ps
}
