package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStderrSummary(t *testing.T) {
	require.Equal(t, "", StderrSummary(nil))
	require.Equal(t, "b | c | d", StderrSummary([]string{"a", "b", "", "c", " d "}))
	require.Equal(t, strings.Repeat("x", diagStderrLineLen)+"…", StderrSummary([]string{strings.Repeat("x", 500)}))
}
