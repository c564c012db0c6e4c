package submit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

func TestStagingOrphaned(t *testing.T) {
	const rmStart = 1700000000000
	id := func(ts int64) *hadoopyarn.ApplicationIdProto {
		return &hadoopyarn.ApplicationIdProto{ClusterTimestamp: proto.Int64(ts), Id: proto.Int32(7)}
	}
	S := func(s hadoopyarn.YarnApplicationStateProto) hadoopyarn.YarnApplicationStateProto { return s }
	for _, tc := range []struct {
		name  string
		ts    int64
		known bool
		state hadoopyarn.YarnApplicationStateProto
		age   time.Duration
		want  bool
		why   string
	}{
		{"finished", rmStart, true, S(hadoopyarn.YarnApplicationStateProto_FINISHED), 0, true, "FINISHED"},
		{"failed", rmStart, true, S(hadoopyarn.YarnApplicationStateProto_FAILED), 0, true, "FAILED"},
		{"killed", rmStart, true, S(hadoopyarn.YarnApplicationStateProto_KILLED), time.Hour, true, "KILLED"},
		{"running, old", rmStart, true, S(hadoopyarn.YarnApplicationStateProto_RUNNING), 48 * time.Hour, false, "RUNNING"},
		{"accepted", rmStart, true, S(hadoopyarn.YarnApplicationStateProto_ACCEPTED), time.Hour, false, "ACCEPTED"},
		{"new saving", rmStart, true, S(hadoopyarn.YarnApplicationStateProto_NEW_SAVING), time.Hour, false, "NEW_SAVING"},
		{"unknown, earlier RM", rmStart - 1, false, 0, 0, true, "unknown"},
		{"unknown, this RM, being submitted", rmStart, false, 0, time.Minute, false, "unknown"},
		// Not from an earlier RM: another RM (HA) or a hand-made id; only age tells.
		{"unknown, later timestamp, young", rmStart + 1, false, 0, time.Minute, false, "unknown"},
		{"unknown, later timestamp, old", rmStart + 1, false, 0, orphanGrace, true, "unknown"},
		{"unknown, this RM, forgotten", rmStart, false, 0, orphanGrace, true, "unknown"},
		{"unknown, RM start not known", rmStart - 1, false, 0, time.Minute, false, "unknown"},
	} {
		start := int64(rmStart)
		if tc.name == "unknown, RM start not known" {
			start = 0
		}
		got, why := stagingOrphaned(id(tc.ts), tc.known, tc.state, start, tc.age)
		require.Equal(t, tc.want, got, tc.name)
		require.Equal(t, tc.why, why, tc.name)
	}
}
