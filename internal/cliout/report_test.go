package cliout

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{-time.Second: "0s", 42 * time.Second: "42s", 185 * time.Second: "3m05s", 3723 * time.Second: "1h02m03s"} {
		require.Equal(t, want, Duration(d))
	}
}
