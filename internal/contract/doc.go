// Package contract is what the client, the ApplicationMaster and the task
// launcher agree on, and nothing else: the job file the client writes and
// the AM reads (JobFile), the AM's status report the client reads
// (StatusReport at StatusPath), the TFYARN_* environment variables, the
// names of the files shipped into containers (BinaryName, JobFileName), the
// alias of the keytab in the AM's credentials (KeytabSecret), the YARN LocalResource description the job file carries
// (Resource) and the table of timeouts (timeouts.go).
//
// It is a leaf (DESIGN.md §2, floor 1): it imports only the standard
// library, taskspec, hadoopconf and the generated YARN protobuf types, so
// that client, appmaster and executor can share it without importing one
// another.
package contract
