// Package yarn holds typed clients for YARN's protobuf RPC protocols, built
// on package ipc: ApplicationClient speaks ApplicationClientProtocol to the
// ResourceManager (submit, report, list, kill, cluster inspection),
// AMRMClient speaks ApplicationMasterProtocol for the AM (register,
// allocate, finish), and ContainerManager speaks ContainerManagementProtocol
// to the NodeManagers (start, stop, status).
//
// Requests and replies are the generated messages of yarnpb/hadoopyarn; the
// small helpers here (application ids, resource amounts, state names) exist
// so callers don't have to spell out proto plumbing for the common cases.
package yarn
