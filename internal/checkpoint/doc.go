// Package checkpoint keeps a task's checkpoints on HDFS for it (`run
// --checkpoint`). The program writes them into a local directory
// (EnvDir); the launcher restores the latest before the program starts and
// copies back what the program marked complete (CompleteMark), at once
// when the task is warned of a preemption, and what it left when it
// exited 0.
//
// On HDFS a job's directory holds one directory per task (Slot), and in it
// one directory per checkpoint, named by ID. A checkpoint is written under
// a temporary name beginning with "." and renamed to its ID once every
// file is written: only IDs are ever restored, so a save cut short is
// never the latest. The last Spec.Keep of each task stay.
//
// The package talks to HDFS only through Store, which package hdfs
// implements: the launcher, which must not link HDFS itself, gets one from
// `tfyarn task`.
package checkpoint
