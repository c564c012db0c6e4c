// Package webui is the AM's web page behind YARN's tracking URL: the job,
// every task with its state, address, container, node, exit code,
// restarts, elapsed time, CPU and memory (flagged near the container's
// limit), GPUs and live-log links, the TensorBoard link and
// the diagnostics, rendered on the server from a status snapshot so the
// page reads without JavaScript; a small embedded script refreshes it in
// place. Every link is relative, since YARN's web proxy serves the page
// under /proxy/<application id>/, and nothing comes from a CDN.
package webui
