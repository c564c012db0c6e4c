// Package yarnpb holds the protobuf definitions tfyarn speaks on the wire and the Go code
// generated from them. It contains no hand-written code; the Go packages are:
//
//   - hadoopcommon: Hadoop common protocol messages (RpcHeader.proto, IpcConnectionContext.proto,
//     ProtobufRpcEngine.proto, Security.proto: TokenProto, CredentialsProto and the
//     delegation-token requests shared by the ResourceManager and the NameNode).
//   - hadoopyarn: YARN's yarn_protos.proto, yarn_service_protos.proto and the services of
//     ApplicationClientProtocol (client ↔ RM), ApplicationMasterProtocol (AM ↔ RM) and
//     ContainerManagementProtocol (AM ↔ NM).
//   - hadoophdfs: the ClientNamenodeProtocol methods tfyarn calls on its own RPC client
//     (getServerDefaults, rename2, delete; the delegation-token methods, whose messages are in
//     hadoopcommon).
//
// The .proto sources live in proto/tfyarn/hadoop/<dir>/. Field numbers, types, labels,
// defaults and enum values follow Apache Hadoop 3.4 (proto2, like Hadoop). The proto packages
// are renamed to tfyarn.hadoop.{common,yarn,hdfs} and the files sit under tfyarn/hadoop/ so
// that their entries in the global protobuf registry never clash with the ones
// github.com/colinmarc/hdfs/v2 registers (Security.proto, hadoop.common.TokenProto, ...).
// Package names are not part of the wire format, so the messages stay wire-compatible with
// Hadoop's.
//
// The *.pb.go files are generated and committed; do not edit them. Regenerate with
//
//	make proto
//
// which runs scripts/genproto.sh (pinned protoc and protoc-gen-go).
package yarnpb
