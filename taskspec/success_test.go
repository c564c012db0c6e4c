package taskspec

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSuccessRule(t *testing.T) {
	for _, r := range SuccessRules {
		got, err := ParseSuccessRule(string(r))
		require.NoError(t, err)
		require.Equal(t, r, got)
	}
	require.Equal(t, SuccessRule("chief"), SuccessChief)
	require.Equal(t, SuccessRule("all"), SuccessAll)
	for _, bad := range []string{"most", "", "Chief", " all"} {
		_, err := ParseSuccessRule(bad)
		require.EqualError(t, err, `unknown success rule "`+bad+`"; expected chief or all`)
		var ve *ValidationError
		require.True(t, errors.As(err, &ve), "a validation error: %T", err)
	}
}

func TestDefaultSuccessRuleFollowsTheJobsShape(t *testing.T) {
	workers := group(Worker, 3, 1, 256, 0)
	plain := Job{Tasks: []TaskGroup{workers}, Command: "sh"}
	require.Equal(t, SuccessAll, DefaultSuccessRule(plain), "generic command: every task must succeed")
	require.Equal(t, SuccessChief, DefaultSuccessRule(Job{Tasks: []TaskGroup{workers}, Script: "train.py"}), "a script is a TensorFlow job")
	for _, g := range []TaskGroup{group(Chief, 1, 1, 256, 0), group(PS, 1, 1, 256, 0), group(Evaluator, 1, 1, 256, 0)} {
		job := Job{Tasks: []TaskGroup{workers, g}, Command: "sh"}
		require.Equal(t, SuccessChief, DefaultSuccessRule(job), "with %s", g.Type)
	}
	require.Equal(t, SuccessAll, DefaultSuccessRule(Job{Tasks: []TaskGroup{workers, group(TensorBoard, 1, 1, 256, 0)}, Command: "sh"}),
		"tensorboard alone does not make a TensorFlow job")
}

func TestSuccessRuleOf(t *testing.T) {
	plain := Job{Tasks: []TaskGroup{group(Worker, 2, 1, 256, 0)}, Command: "sh"}
	r, err := SuccessRuleOf("", plain)
	require.NoError(t, err)
	require.Equal(t, SuccessAll, r)
	r, err = SuccessRuleOf(SuccessChief, plain)
	require.NoError(t, err)
	require.Equal(t, SuccessChief, r)
	_, err = SuccessRuleOf("most", plain)
	require.EqualError(t, err, `unknown success rule "most"; expected chief or all`)
}
