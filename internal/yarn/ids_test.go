package yarn

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

func TestParseApplicationID(t *testing.T) {
	for _, tc := range []struct {
		in      string
		ts      int64
		seq     int32
		canon   string
		wantErr bool
	}{
		{in: "application_1700000000000_0001", ts: 1700000000000, seq: 1, canon: "application_1700000000000_0001"},
		{in: "application_1_1", ts: 1, seq: 1, canon: "application_1_0001"},
		{in: "application_1795270000000_12345", ts: 1795270000000, seq: 12345, canon: "application_1795270000000_12345"},
		{in: "application_0_0000", ts: 0, seq: 0, canon: "application_0_0000"},
		{in: "", wantErr: true},
		{in: "app_1_0001", wantErr: true},
		{in: "application_", wantErr: true},
		{in: "application_1700000000000", wantErr: true},
		{in: "application_1700000000000_", wantErr: true},
		{in: "application__0001", wantErr: true},
		{in: "application_-1_0001", wantErr: true},
		{in: "application_1_+1", wantErr: true},
		{in: "application_1_0001_7", wantErr: true},
		{in: "application_1_99999999999", wantErr: true}, // overflows int32
		{in: "container_1_0001_01_000001", wantErr: true},
		{in: " application_1_0001", wantErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			id, err := ParseApplicationID(tc.in)
			if tc.wantErr {
				var ide *IDError
				require.ErrorAs(t, err, &ide)
				require.Equal(t, tc.in, ide.Input)
				require.Contains(t, err.Error(), "application_<clusterTimestamp>_<sequence>")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.ts, id.GetClusterTimestamp())
			require.Equal(t, tc.seq, id.GetId())
			require.Equal(t, tc.canon, FormatApplicationID(id))
		})
	}
}

func TestFormatIDs(t *testing.T) {
	require.Equal(t, "", FormatApplicationID(nil))
	require.Equal(t, "application_42_0007", FormatApplicationID(&hadoopyarn.ApplicationIdProto{ClusterTimestamp: proto.Int64(42), Id: proto.Int32(7)}))
	require.Equal(t, "", FormatNodeID(nil))
	require.Equal(t, "nm1:45454", FormatNodeID(&hadoopyarn.NodeIdProto{Host: proto.String("nm1"), Port: proto.Int32(45454)}))
}

func TestIDErrorReadsLikePathError(t *testing.T) {
	_, err := ParseApplicationID("app_1")
	require.EqualError(t, err, `yarn: parse application id "app_1": expected `+ApplicationIDForm)
}
