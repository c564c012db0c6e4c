// Package bench holds tfyarn's benchmarks against the real test cluster.
// The cluster ones are behind the build tag bench and write their results to
// bench/results/; run them with bench/run.sh (make bench).
package bench
