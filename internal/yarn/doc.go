// Package yarn holds typed clients for YARN's protobuf RPC protocols, built
// on package ipc: ApplicationClient speaks ApplicationClientProtocol to the
// ResourceManager (submit, report, list, kill, cluster inspection).
//
// Requests and replies are the generated messages of yarnpb/hadoopyarn; the
// small helpers here (application ids, resource amounts, state names) exist
// so callers don't have to spell out proto plumbing for the common cases.
package yarn
