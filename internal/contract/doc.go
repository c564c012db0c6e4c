// Package contract is what the client, the ApplicationMaster and the task
// launcher agree on, and nothing else: the job file the client writes and
// the AM reads (JobFile), the AM's status report the client reads
// (StatusReport at StatusPath: aliases of the public package jobreport's
// types, their one definition) and the key that guards it (statuskey.go),
// the environment variables (the TFYARN_* names tfyarn sets, and the ones
// YARN sets in every container that tfyarn reads), the names of the files
// shipped into containers (BinaryName, JobFileName, SealedKeytabName), the
// alias of the sealed keytab's key in the AM's credentials (KeytabSecret), the YARN LocalResource description
// the job file carries (Resource), and the files a task's program and its
// launcher share: the preemption warning (preemption.go), the warnings
// file (warnings.go) and the progress file (progress.go). The table of timeouts is taskspec's (timeouts.go).
//
// It is a leaf (DESIGN.md §2, floor 1): it imports only the standard
// library, taskspec, jobreport, hadoopconf and the generated YARN protobuf
// types, so that client, appmaster and executor can share it without
// importing one another.
package contract
