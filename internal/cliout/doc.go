// Package cliout renders command output: aligned text tables for people and
// indented JSON for scripts, and the cells of a job's report (durations,
// memory, a task's CPU/memory and GPUs, training progress) in the words both
// `tfyarn status` and the AM's web page use.
package cliout
