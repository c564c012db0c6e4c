package core

// NearMemoryFraction is how close to its container's memory a task's
// program may come before it is flagged: 90%. YARN's NodeManager kills a
// container whose processes' RSS exceeds its memory (exit status -104),
// counting the launcher and its shell too (19-26 MiB measured), and it looks every 3 s while
// the launcher samples every 10 s: the last 10% is what a program growing
// by a batch's tensors between two samples, plus the launcher, use up. A
// lower mark would flag the many jobs that size their containers tightly
// on purpose (TensorFlow takes what it will need at the start and holds
// it).
const NearMemoryFraction = 0.9

// NearMemoryLimit reports whether a program whose peak RSS was rssBytes
// came close enough to its container's limitBytes to be told: flagged in
// the status report, told once by run. A limit of 0 is unknown: never.
func NearMemoryLimit(rssBytes, limitBytes int64) bool {
	return limitBytes > 0 && float64(rssBytes) >= NearMemoryFraction*float64(limitBytes)
}
