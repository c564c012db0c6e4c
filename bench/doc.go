// Package bench holds tfyarn's benchmarks against the real test cluster.
// They are e2e tests (build tag e2e) that write their results to
// bench/results/; run them with bench/run.sh (make bench).
package bench
