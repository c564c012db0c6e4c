// Package taskspec is tfyarn's job model: the task groups a job asks for,
// the one-flag-per-task-type spec grammar ("2x4c,16g,1gpu"), validation of a
// whole job against itself and against a cluster's maximum allocation, the
// success rules, and the cluster of a running job (ClusterSpec: its tasks'
// addresses). What a framework makes of that cluster (TensorFlow's
// TF_CONFIG, torchrun's arguments, JAX's variables) is not here but in
// tfyarn's internal framework package.
//
// Everything here is pure: no I/O, no clocks, no goroutines. The client, the
// ApplicationMaster and the container-side launcher all build on the same
// functions, so a spec that parses on the client means the same thing in the
// AM, and every task sees the same cluster.
package taskspec
