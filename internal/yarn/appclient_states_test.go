package yarn

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

func TestStateNames(t *testing.T) {
	for _, in := range []string{"running", "RUNNING", " Running "} {
		s, err := ParseAppState(in)
		require.NoError(t, err)
		require.Equal(t, hadoopyarn.YarnApplicationStateProto_RUNNING, s)
	}
	_, err := ParseAppState("RUN")
	require.ErrorContains(t, err, "NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED")

	require.Equal(t, "KILLED", AppStateName(hadoopyarn.YarnApplicationStateProto_KILLED))
	require.Equal(t, "SUCCEEDED", FinalStatusName(hadoopyarn.FinalApplicationStatusProto_APP_SUCCEEDED))
	require.Equal(t, "UNDEFINED", FinalStatusName(hadoopyarn.FinalApplicationStatusProto_APP_UNDEFINED))
	require.Equal(t, "RUNNING", NodeStateName(hadoopyarn.NodeStateProto_NS_RUNNING))
	require.Equal(t, "DECOMMISSIONING", NodeStateName(hadoopyarn.NodeStateProto_NS_DECOMMISSIONING))
	require.Equal(t, "STOPPED", QueueStateName(hadoopyarn.QueueStateProto_Q_STOPPED))

	for _, s := range ActiveAppStates {
		require.False(t, IsTerminal(s), s.String())
	}
	for _, s := range []hadoopyarn.YarnApplicationStateProto{
		hadoopyarn.YarnApplicationStateProto_FINISHED, hadoopyarn.YarnApplicationStateProto_FAILED, hadoopyarn.YarnApplicationStateProto_KILLED,
	} {
		require.True(t, IsTerminal(s), s.String())
	}
}
