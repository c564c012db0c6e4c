//go:build e2e

package ipc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/emptypb"
)

// These run against the real cluster of `make cluster-up` (started when it is not up):
//
//	go test -tags e2e -run E2E ./internal/ipc/

// rmAddress and nnAddress are the main test cluster's ResourceManager and NameNode RPC addresses.
func rmAddress(t *testing.T) string { return clustertest.Require(t).Facts["rm"] }

func nnAddress(t *testing.T) string {
	return strings.TrimPrefix(clustertest.Require(t).Facts["fs.defaultFS"], "hdfs://")
}

func TestE2EResourceManagerClusterMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, Config{
		Addresses: []string{rmAddress(t)},
		Protocol:  "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB",
	})
	require.NoError(t, err)
	defer c.Close()

	resp := &hadoopyarn.GetClusterMetricsResponseProto{}
	require.NoError(t, c.Call(ctx, "getClusterMetrics", &hadoopyarn.GetClusterMetricsRequestProto{}, resp))
	require.EqualValues(t, clustertest.Require(t).NodeManagers(t), resp.GetClusterMetrics().GetNumNodeManagers(), "%v", resp)

	// An unknown method comes back as a remote error on a still-usable connection.
	err = c.Call(ctx, "noSuchMethod", &emptypb.Empty{}, &emptypb.Empty{})
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	t.Logf("unknown method: %v (code %v)", err, re.Code)
	require.NoError(t, c.Call(ctx, "getClusterMetrics", &hadoopyarn.GetClusterMetricsRequestProto{}, resp))
}

func TestE2ENameNodeFsStats(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, Config{
		Addresses: []string{nnAddress(t)},
		Protocol:  "org.apache.hadoop.hdfs.protocol.ClientProtocol",
	})
	require.NoError(t, err)
	defer c.Close()

	// GetFsStatusRequestProto is empty; GetFsStatsResponseProto starts with
	// capacity = 1, used = 2, remaining = 3 (all uint64). Decoded by hand so
	// this floor-2 test needs no HDFS protos.
	resp := &emptypb.Empty{}
	require.NoError(t, c.Call(ctx, "getFsStats", &emptypb.Empty{}, resp))
	fields := map[protowire.Number]uint64{}
	b := resp.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		require.GreaterOrEqual(t, n, 0)
		b = b[n:]
		if typ == protowire.VarintType {
			v, m := protowire.ConsumeVarint(b)
			require.GreaterOrEqual(t, m, 0)
			fields[num] = v
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		require.GreaterOrEqual(t, m, 0)
		b = b[m:]
	}
	t.Logf("capacity=%d used=%d remaining=%d", fields[1], fields[2], fields[3])
	require.Greater(t, fields[1], uint64(0), "capacity")
	require.LessOrEqual(t, fields[2], fields[1], "used <= capacity")
	require.LessOrEqual(t, fields[3], fields[1], "remaining <= capacity")
}

func TestE2ERefusedAddressFailsOver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := NewClient(Config{
		Addresses: []string{refusedAddr(t), rmAddress(t)},
		Protocol:  "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB",
	})
	require.NoError(t, err)
	defer c.Close()
	resp := &hadoopyarn.GetClusterMetricsResponseProto{}
	require.NoError(t, c.Call(ctx, "getClusterMetrics", &hadoopyarn.GetClusterMetricsRequestProto{}, resp))
	require.Equal(t, rmAddress(t), c.Addr())
}
