// Package ipc is a client for Hadoop's native RPC protocol (the one
// org.apache.hadoop.ipc.Client speaks): the "hrpc" connection preamble, the
// IpcConnectionContext, length-framed calls of the protocol-buffer RPC engine,
// SASL negotiation and wrapping, and failover between server addresses.
//
// It knows nothing of YARN or HDFS: callers name the protocol
// (e.g. "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB"), the method
// and the request/response messages.
//
//	c, err := ipc.NewClient(ipc.Config{
//		Addresses: []string{"rm1:8032", "rm2:8032"},
//		Protocol:  "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB",
//	})
//	err = c.Call(ctx, "getClusterMetrics", req, resp)
//
// One Client keeps at most one connection per address; many calls may be in
// flight on it at once, matched to their replies by call id.
package ipc
