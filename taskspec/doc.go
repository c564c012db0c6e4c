// Package taskspec is tfyarn's job model: the task groups a job asks for,
// the one-flag-per-task-type spec grammar ("2x4c,16g,1gpu"), validation of a
// whole job against itself and against a cluster's maximum allocation, and
// the TensorFlow view of a running job (TF_CONFIG and the TF1-style argument
// placeholders).
//
// Everything here is pure: no I/O, no clocks, no goroutines. The client, the
// ApplicationMaster and the container-side launcher all build on the same
// functions, so a spec that parses on the client means the same thing in the
// AM, and every task computes its TF_CONFIG the same way.
package taskspec
