// Package aggregated reads the container logs a NodeManager aggregated to
// HDFS, in Hadoop's own formats, without a JVM: the TFile format
// (LogAggregationTFileController, Hadoop's default) — a BCFile whose data
// blocks are uncompressed or zlib ("gz") — holding AggregatedLogFormat's
// records, and prints them the way `yarn logs` does (WriteHeader, WriteFooter).
//
// Every length read from a file is bounded before it is used, so a corrupt or
// hostile file fails with an error instead of exhausting memory.
package aggregated
