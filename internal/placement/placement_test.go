package placement

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// testCluster is the test cluster's shape: one 8 GiB, 8 vcore node without
// a label, one with label gpu and 2 GPUs; queue default may use every label
// but has capacity only without one, ml-gpu owns gpu (its default label).
func testCluster(queue string) Cluster {
	cs := Cluster{
		Nodes: []Node{
			{ID: "n1:1", MemoryMiB: 8192, VCores: 8},
			{ID: "n2:1", Label: "gpu", MemoryMiB: 8192, VCores: 8, GPUs: 2},
		},
		Labels: []string{"gpu"},
	}
	switch queue {
	case "default":
		cs.Queue = Queue{Name: "default", AccessibleLabels: []string{"*"},
			Capacity: map[string]float64{"": 60}, MaxCapacity: map[string]float64{"": 100}}
	case "ml-gpu":
		cs.Queue = Queue{Name: "ml-gpu", AccessibleLabels: []string{"gpu"}, DefaultLabel: "gpu",
			Capacity: map[string]float64{"": 40, "gpu": 100}, MaxCapacity: map[string]float64{"": 100, "gpu": 100}}
	case "nolabels":
		cs.Queue = Queue{Name: "nolabels"}
	}
	return cs
}

// smallAM is the ApplicationMaster's container by default (client.Job's
// DefaultAMMemoryMiB and DefaultAMVCores).
var smallAM = AM{Resources: taskspec.Resources{VCores: 1, MemoryMiB: 256}}

func TestCheckPlacement(t *testing.T) {
	spec := func(typ taskspec.TaskType, s, label string) taskspec.TaskGroup {
		g, err := taskspec.ParseSpec(typ, s)
		require.NoError(t, err)
		g.NodeLabel = label
		return g
	}
	for _, tc := range []struct {
		name    string
		queue   string
		tasks   []taskspec.TaskGroup
		label   string // job-wide
		amLabel string
		amMiB   int64
		want    string // "" for placeable
	}{
		{"small", "default", []taskspec.TaskGroup{spec("worker", "3x1c,256m", "")}, "", "", 0, ""},
		{"fills the node exactly with the AM", "default", []taskspec.TaskGroup{spec("worker", "1c,7936m", "")}, "", "", 0, ""},
		{"issue case 1: 8g beside the AM", "default", []taskspec.TaskGroup{spec("worker", "1c,8g", "")}, "", "", 0,
			"the job can never run: its containers on nodes without a label (worker 1 vcores, 8 GiB, the ApplicationMaster 1 vcores, 256 MiB) must all run at once and need 8448 MiB of memory, but those nodes have 8 GiB in all (1 node, the largest with 8 vcores, 8 GiB, 0 GPUs); ask for fewer or smaller tasks, or run the ApplicationMaster elsewhere (--am-node-label)"},
		{"8g with the AM on gpu nodes", "ml-gpu", []taskspec.TaskGroup{spec("worker", "1c,8g", "")}, "", "", 0,
			"the job can never run: its containers on nodes labelled gpu"},
		{"8g in ml-gpu, AM without a label", "ml-gpu", []taskspec.TaskGroup{spec("worker", "1c,8g", "")}, "", "", 0, "the job can never run"},
		{"larger than every node", "default", []taskspec.TaskGroup{spec("worker", "1c,9g", "")}, "", "", 0,
			"worker (1 vcores, 9 GiB) is larger than every node without a label"},
		{"vcores larger than every node", "default", []taskspec.TaskGroup{spec("chief", "9c,1g", "")}, "", "", 0, "chief (9 vcores, 1 GiB) is larger than every node"},
		{"issue case 2: job label gpu in default", "default", []taskspec.TaskGroup{spec("worker", "1c,256m", "")}, "gpu", "", 0,
			"queue default has no capacity on nodes labelled gpu, where worker would run; use a queue with capacity there (--queue) or change --node-label"},
		{"AM label gpu in default", "default", []taskspec.TaskGroup{spec("worker", "1c,256m", "")}, "", "gpu", 0,
			"queue default has no capacity on nodes labelled gpu, where the ApplicationMaster would run; use a queue with capacity there (--queue) or change --am-node-label"},
		{"issue case 3: 3 x 2 GPUs on one 2-GPU node", "ml-gpu", []taskspec.TaskGroup{spec("worker", "3x1c,1g,2gpu", "")}, "", "", 0,
			"need 6 GPUs, but those nodes have 2 in all (1 node"},
		{"2 GPUs fit", "ml-gpu", []taskspec.TaskGroup{spec("worker", "1c,1g,2gpu", "")}, "", "", 0, ""},
		{"GPUs on nodes without any", "default", []taskspec.TaskGroup{spec("worker", "1c,1g,1gpu", "")}, "", "", 0,
			"worker asks 1 GPUs per task, but no node without a label has any"},
		{"issue case 3: 20 x 4g", "default", []taskspec.TaskGroup{spec("worker", "20x1c,4g", "")}, "", "", 0,
			"worker 20 × 1 vcores, 4 GiB, the ApplicationMaster 1 vcores, 256 MiB) must all run at once and need 82176 MiB of memory"},
		{"issue case 4: no such label", "default", []taskspec.TaskGroup{spec("worker", "1c,256m", "nosuchlabel")}, "", "", 0,
			`worker asks node label "nosuchlabel", which the cluster does not have (its labels: gpu); use one of them or change --node-label`},
		{"label the queue cannot use", "nolabels", []taskspec.TaskGroup{spec("worker", "1c,256m", "gpu")}, "", "", 0,
			`queue nolabels cannot use node label "gpu" (it may use: none), which worker asks`},
		{"per-type labels", "ml-gpu", []taskspec.TaskGroup{spec("chief", "1c,1g", ""), spec("worker", "2x1c,1g,1gpu", "gpu")}, "", "", 0, ""},
		{"AM too big", "default", []taskspec.TaskGroup{spec("worker", "1c,256m", "")}, "", "", 9000,
			"the ApplicationMaster (1 vcores, 9000 MiB) is larger than every node without a label (1 node, the largest with 8 vcores, 8 GiB, 0 GPUs); ask for less (--am-memory, --am-vcores), or run it elsewhere (--am-node-label)"},
		{"no capacities reported", "nolabels", []taskspec.TaskGroup{spec("worker", "1c,256m", "")}, "", "", 0, ""},
	} {
		job := taskspec.Job{Tasks: tc.tasks, NodeLabel: tc.label, Queue: tc.queue}
		am := smallAM
		am.NodeLabel = tc.amLabel
		if tc.amMiB > 0 {
			am.Resources.MemoryMiB = tc.amMiB
		}
		err := Check(job, am, testCluster(tc.queue))
		if tc.want == "" {
			require.NoError(t, err, tc.name)
			continue
		}
		require.ErrorContains(t, err, tc.want, tc.name)
		var ve *taskspec.ValidationError
		require.ErrorAs(t, err, &ve, tc.name)
		require.NotContains(t, err.Error(), "\n", tc.name)
	}
}

func TestCheckPlacementBigOnes(t *testing.T) {
	// 3 × 5 GiB + the AM fit in two 8 GiB nodes' sum, but no two of them
	// share a node.
	cs := Cluster{Nodes: []Node{{ID: "a", MemoryMiB: 8192, VCores: 8}, {ID: "b", MemoryMiB: 8192, VCores: 8}},
		Queue: Queue{Name: "default"}}
	g, err := taskspec.ParseSpec(taskspec.Worker, "3x1c,5g")
	require.NoError(t, err)
	err = Check(taskspec.Job{Tasks: []taskspec.TaskGroup{g}}, smallAM, cs)
	require.ErrorContains(t, err, "need a node each for 3 containers larger than half a node, but there are 2 such nodes")
	g.Instances = 2
	require.NoError(t, Check(taskspec.Job{Tasks: []taskspec.TaskGroup{g}}, smallAM, cs))
}

// An elastic job is placeable when --min-workers of its workers are: the
// others may wait while it trains.
func TestCheckPlacementElastic(t *testing.T) {
	g, err := taskspec.ParseSpec(taskspec.Worker, "3x1c,1g,1gpu")
	require.NoError(t, err)
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{g}, Queue: "ml-gpu", Framework: "pytorch"}
	require.ErrorContains(t, Check(job, smallAM, testCluster("ml-gpu")), "need 3 GPUs, but those nodes have 2 in all")
	job.MinWorkers = 2
	require.NoError(t, Check(job, smallAM, testCluster("ml-gpu")))
	job.MinWorkers = 3
	require.ErrorContains(t, Check(job, smallAM, testCluster("ml-gpu")), "need 3 GPUs, but those nodes have 2 in all")
}

func TestClusterOffers(t *testing.T) {
	require.Equal(t, map[string]string{
		"":    "queue default on nodes without a label: 1 node, the largest with 8 vcores, 8 GiB, 0 GPUs; the queue's capacity there 60% (max 100%)",
		"gpu": "queue default on nodes labelled gpu: 1 node, the largest with 8 vcores, 8 GiB, 2 GPUs; the queue has no capacity there",
	}, Offers(testCluster("default")))
	require.Equal(t, "queue nolabels cannot use nodes labelled gpu", Offers(testCluster("nolabels"))["gpu"])
}

// A spread needs a node per spread task in the partition each lands on:
// the queue's default label for groups that name none.
func TestCheckPlacementSpread(t *testing.T) {
	cs := testCluster("default")
	cs.Nodes = append(cs.Nodes, Node{ID: "n3:1", MemoryMiB: 8192, VCores: 8})
	job := func(spread, label string, groups ...string) taskspec.Job {
		var j taskspec.Job
		j.Spread = spread
		for _, s := range groups {
			typ, spec, _ := strings.Cut(s, "=")
			g, err := taskspec.ParseSpec(taskspec.TaskType(typ), spec)
			require.NoError(t, err)
			g.NodeLabel = label
			j.Tasks = append(j.Tasks, g)
		}
		return j
	}
	require.NoError(t, Check(job("worker", "", "worker=2x1c,256m", "ps=2x1c,256m"), smallAM, cs), "ps is not spread")
	require.EqualError(t, Check(job("worker", "", "worker=3x1c,256m"), smallAM, cs),
		"the job can never run: placement constraint no two worker tasks on one node (--spread worker) needs a node each for its 3 worker tasks on nodes without a label, but there are 2 running; ask for at most 2, or drop --spread")
	require.NoError(t, Check(job("all", "", "chief=1c,256m", "worker=1x1c,256m", "evaluator=1c,256m"), smallAM, cs), "an evaluator is not spread")
	require.EqualError(t, Check(job("all", "gpu", "chief=1c,256m", "worker=1x1c,256m"), smallAM, cs),
		"the job can never run: placement constraint no two chief, worker or ps tasks on one node (--spread all) needs a node each for its 2 tasks on nodes labelled gpu, but there is 1 running; ask for at most 1, or drop --spread")
}

// A colocation whose two types land on different labels (the queue's
// default for groups that name none) can never be met: a node has one.
func TestCheckPlacementColocate(t *testing.T) {
	cs := testCluster("default")
	cs.Queue.Capacity["gpu"], cs.Queue.MaxCapacity["gpu"] = 100, 100
	job := func(apart bool, psLabel string) taskspec.Job {
		var j taskspec.Job
		for _, s := range []string{"worker=1x1c,256m", "ps=1c,256m"} {
			typ, spec, _ := strings.Cut(s, "=")
			g, err := taskspec.ParseSpec(taskspec.TaskType(typ), spec)
			require.NoError(t, err)
			if g.Type == taskspec.PS {
				g.NodeLabel = psLabel
			}
			j.Tasks = append(j.Tasks, g)
		}
		j.Affinities = taskspec.Affinities{{Type: taskspec.PS, Other: taskspec.Worker, Apart: apart}}
		return j
	}
	require.NoError(t, Check(job(false, ""), smallAM, cs))
	require.NoError(t, Check(job(true, "gpu"), smallAM, cs), "apart across labels always holds")
	require.EqualError(t, Check(job(false, "gpu"), smallAM, cs),
		"the job can never run: placement constraint each ps task on a node running a worker task (--colocate ps=worker), but ps tasks run on nodes labelled gpu and worker tasks on nodes without a label, and a node has one label; give both the same --node-label, or drop --colocate ps=worker")
}

// --apart A=B with B spread over every node of A's label leaves A no node.
func TestCheckPlacementApartSpread(t *testing.T) {
	cs := testCluster("default")
	cs.Nodes = append(cs.Nodes, Node{ID: "n3:1", MemoryMiB: 8192, VCores: 8})
	job := func(spread string, workers int) taskspec.Job {
		var j taskspec.Job
		j.Spread = spread
		for _, s := range []string{fmt.Sprintf("worker=%dx1c,256m", workers), "ps=1c,256m"} {
			typ, spec, _ := strings.Cut(s, "=")
			g, err := taskspec.ParseSpec(taskspec.TaskType(typ), spec)
			require.NoError(t, err)
			j.Tasks = append(j.Tasks, g)
		}
		j.Affinities = taskspec.Affinities{{Type: taskspec.PS, Other: taskspec.Worker, Apart: true}}
		return j
	}
	require.NoError(t, Check(job("worker", 1), smallAM, cs), "one of two nodes left")
	require.NoError(t, Check(job("", 2), smallAM, cs), "workers not spread may share a node")
	require.EqualError(t, Check(job("worker", 2), smallAM, cs),
		"the job can never run: placement constraint no ps task on a node running a worker task (--apart ps=worker), but the 2 spread worker tasks take every one of the 2 running nodes without a label; ask for fewer worker tasks, or drop --apart ps=worker")
}
