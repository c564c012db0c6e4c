package yarnpb_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// colinmarc/hdfs registers Hadoop's own Security.proto, RpcHeader.proto, hdfs.proto, ...
	// (packages hadoop.common / hadoop.hdfs) at init. Linking it next to ours proves the two
	// sets of registrations do not clash (a clash panics at init, before any test runs).
	_ "github.com/colinmarc/hdfs/v2"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoophdfs"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

func TestRegistrationsCoexistWithColinmarcHDFS(t *testing.T) {
	theirs, err := protoregistry.GlobalFiles.FindFileByPath("Security.proto")
	require.NoError(t, err, "colinmarc/hdfs should register Security.proto")
	require.Equal(t, protoreflect.FullName("hadoop.common"), theirs.Package())

	ours, err := protoregistry.GlobalFiles.FindFileByPath("tfyarn/hadoop/common/Security.proto")
	require.NoError(t, err)
	require.Equal(t, protoreflect.FullName("tfyarn.hadoop.common"), ours.Package())
	require.Equal(t, ours, (&hadoopcommon.TokenProto{}).ProtoReflect().Descriptor().ParentFile())

	for _, name := range []protoreflect.FullName{"hadoop.common.TokenProto", "tfyarn.hadoop.common.TokenProto"} {
		_, err := protoregistry.GlobalTypes.FindMessageByName(name)
		require.NoError(t, err, name)
	}

	// Every file of ours lives under tfyarn/hadoop/, in a tfyarn.hadoop.* package, and is proto2.
	files := []protoreflect.FileDescriptor{
		hadoopcommon.File_tfyarn_hadoop_common_Security_proto,
		hadoopyarn.File_tfyarn_hadoop_yarn_yarn_protos_proto,
		hadoopyarn.File_tfyarn_hadoop_yarn_yarn_service_protos_proto,
		hadoopyarn.File_tfyarn_hadoop_yarn_applicationclient_protocol_proto,
		hadoopyarn.File_tfyarn_hadoop_yarn_applicationmaster_protocol_proto,
		hadoopyarn.File_tfyarn_hadoop_yarn_containermanagement_protocol_proto,
		hadoophdfs.File_tfyarn_hadoop_hdfs_ClientNamenodeProtocol_proto,
		hadoophdfs.File_tfyarn_hadoop_hdfs_hdfs_proto,
	}
	for _, fd := range files {
		require.True(t, strings.HasPrefix(fd.Path(), "tfyarn/hadoop/"), fd.Path())
		require.True(t, strings.HasPrefix(string(fd.Package()), "tfyarn.hadoop."), fd.Path())
		require.Equal(t, protoreflect.Proto2, fd.Syntax(), fd.Path())
	}
}

// The services document the RPC method names that go into RequestHeaderProto.methodName.
func TestServiceMethodNames(t *testing.T) {
	methods := func(fd protoreflect.FileDescriptor) map[string]bool {
		require.Equal(t, 1, fd.Services().Len(), fd.Path())
		ms := fd.Services().Get(0).Methods()
		out := map[string]bool{}
		for i := 0; i < ms.Len(); i++ {
			out[string(ms.Get(i).Name())] = true
		}
		return out
	}
	client := methods(hadoopyarn.File_tfyarn_hadoop_yarn_applicationclient_protocol_proto)
	for _, m := range []string{"getNewApplication", "submitApplication", "getApplicationReport", "getApplications",
		"forceKillApplication", "getClusterMetrics", "getClusterNodes", "getQueueInfo", "getQueueUserAcls",
		"getClusterNodeLabels", "getLabelsToNodes", "getNodeToLabels", "getResourceProfiles", "getResourceTypeInfo",
		"getApplicationAttempts", "getApplicationAttemptReport", "getContainers", "getContainerReport",
		"getDelegationToken", "renewDelegationToken", "cancelDelegationToken"} {
		require.True(t, client[m], m)
	}
	require.Equal(t, map[string]bool{"registerApplicationMaster": true, "finishApplicationMaster": true, "allocate": true},
		methods(hadoopyarn.File_tfyarn_hadoop_yarn_applicationmaster_protocol_proto))
	cm := methods(hadoopyarn.File_tfyarn_hadoop_yarn_containermanagement_protocol_proto)
	for _, m := range []string{"startContainers", "stopContainers", "getContainerStatuses", "signalToContainer"} {
		require.True(t, cm[m], m)
	}
	require.Equal(t, map[string]bool{"getServerDefaults": true, "rename2": true, "delete": true,
		"getDelegationToken": true, "renewDelegationToken": true, "cancelDelegationToken": true},
		methods(hadoophdfs.File_tfyarn_hadoop_hdfs_ClientNamenodeProtocol_proto))
}

func TestResourceRequestRoundTrip(t *testing.T) {
	req := &hadoopyarn.ResourceRequestProto{
		Priority:     &hadoopyarn.PriorityProto{Priority: proto.Int32(3)},
		ResourceName: proto.String("*"),
		Capability: &hadoopyarn.ResourceProto{
			Memory:       proto.Int64(8192),
			VirtualCores: proto.Int32(4),
			ResourceValueMap: []*hadoopyarn.ResourceInformationProto{
				{Key: proto.String("yarn.io/gpu"), Value: proto.Int64(2), Units: proto.String("")},
			},
		},
		NumContainers:       proto.Int32(8),
		RelaxLocality:       proto.Bool(true),
		NodeLabelExpression: proto.String("gpu"),
		ExecutionTypeRequest: &hadoopyarn.ExecutionTypeRequestProto{
			ExecutionType:        hadoopyarn.ExecutionTypeProto_GUARANTEED.Enum(),
			EnforceExecutionType: proto.Bool(true),
		},
		AllocationRequestId: proto.Int64(7),
	}
	b, err := proto.Marshal(req)
	require.NoError(t, err)

	got := &hadoopyarn.ResourceRequestProto{}
	require.NoError(t, proto.Unmarshal(b, got))
	require.True(t, proto.Equal(req, got), "round trip: %v", got)
	require.Equal(t, int64(7), got.GetAllocationRequestId())
	require.Equal(t, "yarn.io/gpu", got.GetCapability().GetResourceValueMap()[0].GetKey())
	require.Equal(t, int64(2), got.GetCapability().GetResourceValueMap()[0].GetValue())

	// proto2 presence and Hadoop's defaults survive: an unset field is absent, its getter
	// returns Hadoop's declared default.
	empty := &hadoopyarn.ResourceRequestProto{}
	require.Nil(t, empty.AllocationRequestId)
	require.Equal(t, int64(-1), empty.GetAllocationRequestId())
	require.True(t, empty.GetRelaxLocality())
	ctx := &hadoopyarn.ApplicationSubmissionContextProto{}
	require.Equal(t, "default", ctx.GetQueue())
	require.Equal(t, "YARN", ctx.GetApplicationType())
	require.True(t, ctx.GetCancelTokensWhenComplete())
}

// Bytes built by hand with Hadoop's field numbers and wire types must decode into our types,
// and our encoding must produce the same bytes (Go emits fields in field-number order).
func TestWireCompatibilityWithHadoopFieldNumbers(t *testing.T) {
	const clusterTS = int64(1700000000123)

	appID := protowire.AppendTag(nil, 1, protowire.VarintType) // optional int32 id = 1
	appID = protowire.AppendVarint(appID, 42)
	appID = protowire.AppendTag(appID, 2, protowire.VarintType) // optional int64 cluster_timestamp = 2
	appID = protowire.AppendVarint(appID, uint64(clusterTS))

	gotApp := &hadoopyarn.ApplicationIdProto{}
	require.NoError(t, proto.Unmarshal(appID, gotApp))
	require.Equal(t, int32(42), gotApp.GetId())
	require.Equal(t, clusterTS, gotApp.GetClusterTimestamp())
	assertSameBytes(t, appID, gotApp)

	// ResourceInformationProto: required string key = 1, optional int64 value = 2, optional string units = 3.
	gpu := protowire.AppendTag(nil, 1, protowire.BytesType)
	gpu = protowire.AppendString(gpu, "yarn.io/gpu")
	gpu = protowire.AppendTag(gpu, 2, protowire.VarintType)
	gpu = protowire.AppendVarint(gpu, 2)
	gpu = protowire.AppendTag(gpu, 3, protowire.BytesType)
	gpu = protowire.AppendString(gpu, "")
	// ResourceProto: optional int64 memory = 1, optional int32 virtual_cores = 2,
	// repeated ResourceInformationProto resource_value_map = 3.
	res := protowire.AppendTag(nil, 1, protowire.VarintType)
	res = protowire.AppendVarint(res, 4096)
	res = protowire.AppendTag(res, 2, protowire.VarintType)
	res = protowire.AppendVarint(res, 2)
	res = protowire.AppendTag(res, 3, protowire.BytesType)
	res = protowire.AppendBytes(res, gpu)

	gotRes := &hadoopyarn.ResourceProto{}
	require.NoError(t, proto.Unmarshal(res, gotRes))
	require.Equal(t, int64(4096), gotRes.GetMemory())
	require.Equal(t, int32(2), gotRes.GetVirtualCores())
	require.Len(t, gotRes.GetResourceValueMap(), 1)
	require.Equal(t, "yarn.io/gpu", gotRes.GetResourceValueMap()[0].GetKey())
	require.Equal(t, int64(2), gotRes.GetResourceValueMap()[0].GetValue())
	assertSameBytes(t, res, gotRes)

	// ContainerIdProto: app_id = 1, app_attempt_id = 2 (ApplicationAttemptIdProto{application_id = 1,
	// attemptId = 2}), int64 id = 3.
	attempt := protowire.AppendTag(nil, 1, protowire.BytesType)
	attempt = protowire.AppendBytes(attempt, appID)
	attempt = protowire.AppendTag(attempt, 2, protowire.VarintType)
	attempt = protowire.AppendVarint(attempt, 1)
	cid := protowire.AppendTag(nil, 1, protowire.BytesType)
	cid = protowire.AppendBytes(cid, appID)
	cid = protowire.AppendTag(cid, 2, protowire.BytesType)
	cid = protowire.AppendBytes(cid, attempt)
	cid = protowire.AppendTag(cid, 3, protowire.VarintType)
	cid = protowire.AppendVarint(cid, 1<<40|5) // epoch in the high bits, like Hadoop's container ids
	gotCID := &hadoopyarn.ContainerIdProto{}
	require.NoError(t, proto.Unmarshal(cid, gotCID))
	require.Equal(t, int32(1), gotCID.GetAppAttemptId().GetAttemptId())
	require.Equal(t, clusterTS, gotCID.GetAppAttemptId().GetApplicationId().GetClusterTimestamp())
	require.Equal(t, int64(1<<40|5), gotCID.GetId())
	assertSameBytes(t, cid, gotCID)

	// TokenProto: required bytes identifier = 1, password = 2, required string kind = 3, service = 4.
	tok := protowire.AppendTag(nil, 1, protowire.BytesType)
	tok = protowire.AppendBytes(tok, []byte{0, 1, 2})
	tok = protowire.AppendTag(tok, 2, protowire.BytesType)
	tok = protowire.AppendBytes(tok, []byte{0xff})
	tok = protowire.AppendTag(tok, 3, protowire.BytesType)
	tok = protowire.AppendString(tok, "YARN_AM_RM_TOKEN")
	tok = protowire.AppendTag(tok, 4, protowire.BytesType)
	tok = protowire.AppendString(tok, "127.0.0.1:8030")
	gotTok := &hadoopcommon.TokenProto{}
	require.NoError(t, proto.Unmarshal(tok, gotTok))
	require.Equal(t, []byte{0, 1, 2}, gotTok.GetIdentifier())
	require.Equal(t, "YARN_AM_RM_TOKEN", gotTok.GetKind())
	require.Equal(t, "127.0.0.1:8030", gotTok.GetService())
	assertSameBytes(t, tok, gotTok)

	// A required field missing is an error, as in Hadoop (proto2 semantics kept).
	_, err := proto.Marshal(&hadoopcommon.TokenProto{Kind: proto.String("x")})
	require.Error(t, err)

	// FinalApplicationStatusProto (enum, field 13 of ApplicationReportProto) and
	// YarnApplicationStateProto (field 8).
	rep := protowire.AppendTag(nil, 8, protowire.VarintType)
	rep = protowire.AppendVarint(rep, 6) // FINISHED
	rep = protowire.AppendTag(rep, 13, protowire.VarintType)
	rep = protowire.AppendVarint(rep, 1) // APP_SUCCEEDED
	gotRep := &hadoopyarn.ApplicationReportProto{}
	require.NoError(t, proto.Unmarshal(rep, gotRep))
	require.Equal(t, hadoopyarn.YarnApplicationStateProto_FINISHED, gotRep.GetYarnApplicationState())
	require.Equal(t, hadoopyarn.FinalApplicationStatusProto_APP_SUCCEEDED, gotRep.GetFinalApplicationStatus())
}

func assertSameBytes(t *testing.T, want []byte, m proto.Message) {
	t.Helper()
	got, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	require.NoError(t, err)
	require.Equal(t, want, got)
}
