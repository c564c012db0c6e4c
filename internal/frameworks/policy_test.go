package frameworks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/framework/tensorflow"
	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestPolicyFor(t *testing.T) {
	workers, _ := taskspec.ParseSpec(taskspec.Worker, "3x1c")
	chief, _ := taskspec.ParseSpec(taskspec.Chief, "1c")
	plain := taskspec.Job{Tasks: []taskspec.TaskGroup{workers}, Command: "sh"}
	p, err := PolicyFor("", plain)
	require.NoError(t, err)
	require.Equal(t, success.AllSucceed{}, p, "a plain command job defaults to taskspec.SuccessAll")
	p, err = PolicyFor("", taskspec.Job{Tasks: []taskspec.TaskGroup{chief, workers}, Command: "sh"})
	require.NoError(t, err)
	require.Equal(t, tensorflow.ChiefPolicy{StopTimeout: taskspec.TFStopTimeout}, p, "a job with a chief defaults to taskspec.SuccessChief")
	p, err = PolicyFor(taskspec.SuccessChief, plain)
	require.NoError(t, err)
	require.Equal(t, tensorflow.ChiefPolicy{StopTimeout: taskspec.TFStopTimeout}, p)
	p, err = PolicyFor(taskspec.SuccessAll, taskspec.Job{Tasks: []taskspec.TaskGroup{workers}, Script: "train.py"})
	require.NoError(t, err)
	require.Equal(t, success.AllSucceed{}, p)
	require.Equal(t, tensorflow.ChiefPolicy{StopTimeout: taskspec.TFStopTimeout, WorkerGrace: time.Second}, success.WithWorkerGrace(p0(t, taskspec.SuccessChief, plain), time.Second))
	require.Equal(t, success.AllSucceed{}, success.WithWorkerGrace(success.AllSucceed{}, time.Second), "a policy without lingering workers is left as it is")
	_, err = PolicyFor("most", plain)
	require.EqualError(t, err, `unknown success rule "most"; expected chief or all`)
}

func p0(t *testing.T, rule taskspec.SuccessRule, job taskspec.Job) success.Policy {
	p, err := PolicyFor(rule, job)
	require.NoError(t, err)
	return p
}

func TestPolicyForElastic(t *testing.T) {
	job := taskspec.Job{Framework: "pytorch", MinWorkers: 2, Script: "t.py", Tasks: []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 3}}}
	p, err := PolicyFor("", job)
	require.NoError(t, err)
	require.Equal(t, success.Elastic{Min: 2, MaxReplacements: 10}, p, "torchrun's agents restart 10 times")
	job.MinWorkers = 0
	p, err = PolicyFor("", job)
	require.NoError(t, err)
	require.Equal(t, success.AllSucceed{}, p)
}

// Every rule --success takes (taskspec.SuccessRules, against which the CLI and the client check
// it) has a policy, and every rule a framework defines is among them: a framework's new rule
// is named there too, or no user could pick it.
func TestEveryRuleHasAPolicyAndAName(t *testing.T) {
	workers, _ := taskspec.ParseSpec(taskspec.Worker, "2x1c")
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{workers}, Command: "sh"}
	for _, r := range taskspec.SuccessRules {
		p, err := PolicyFor(r, job)
		require.NoError(t, err, r)
		require.NotNil(t, p, r)
	}
	for _, n := range Names() {
		for _, r := range all[n].Rules() {
			require.Contains(t, taskspec.SuccessRules, r.Name, "%s's rule %q: add it to taskspec.SuccessRules", n, r.Name)
			require.NotNil(t, r.Policy(job), r.Name)
		}
	}
}
