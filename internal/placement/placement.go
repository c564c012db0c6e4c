// Package placement decides, before anything is created, whether the
// cluster can ever place a job: per node label, counting the
// ApplicationMaster's container, it refuses labels the cluster lacks or the
// queue may not use, containers larger than every node, and containers
// that together exceed the label's nodes, as --spread, --colocate and
// --apart constrain them. It also words what the cluster offers the job's
// queue per label, for the AM's diagnostics while tasks wait. Pure: the
// caller fetches the cluster's state from the ResourceManager.
package placement

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Node is one RUNNING node as placement sees it.
type Node struct {
	ID        string
	Rack      string // as the RM reports it; "" when unknown
	Label     string // "" for a node without a label (YARN gives a node at most one)
	MemoryMiB int64
	VCores    int64
	GPUs      int64
}

// Queue is what the job's queue may use.
type Queue struct {
	Name string
	// AccessibleLabels are the labels the queue may use ("*": all); nodes
	// without a label are open to every queue.
	AccessibleLabels []string
	// DefaultLabel is the queue's default node label expression, which
	// the RM applies to requests (the AM's too) that carry none.
	DefaultLabel string
	// Capacity and MaxCapacity are the queue's shares, in percent, of each
	// label's resources ("" for nodes without a label); nil when the RM
	// did not report them (no check then).
	Capacity    map[string]float64
	MaxCapacity map[string]float64
}

// Cluster is what the client knows of the cluster at submission: its
// RUNNING nodes, its node labels and the job's queue.
type Cluster struct {
	Nodes  []Node
	Labels []string
	Queue  Queue
}

// canUse reports whether the queue may place containers on label.
func (q Queue) canUse(label string) bool {
	if label == "" {
		return true
	}
	for _, l := range q.AccessibleLabels {
		if l == "*" || l == label {
			return true
		}
	}
	return false
}

// effectiveLabel is the label a request asking label lands on: the queue's
// default when it asks none.
func (cs Cluster) effectiveLabel(label string) string {
	if label == "" {
		return cs.Queue.DefaultLabel
	}
	return label
}

// demand is one kind of container a label must hold.
type demand struct {
	what  string // "worker", "the ApplicationMaster"
	typ   taskspec.TaskType
	count int64
	res   taskspec.Resources
	am    bool
}

func (d demand) shape() string { return d.res.String() }

// LabelName reads well in messages: "nodes labelled gpu", "nodes without
// a label".
func LabelName(label string) string {
	if label == "" {
		return "nodes without a label"
	}
	return "nodes labelled " + label
}

// labelOffer sums up a label's nodes.
type labelOffer struct {
	nodes                 int
	maxMem, maxVC, maxGPU int64
	sumMem, sumVC, sumGPU int64
}

func (cs Cluster) offer(label string) labelOffer {
	var o labelOffer
	for _, n := range cs.Nodes {
		if n.Label != label {
			continue
		}
		o.nodes++
		o.maxMem, o.maxVC, o.maxGPU = max(o.maxMem, n.MemoryMiB), max(o.maxVC, n.VCores), max(o.maxGPU, n.GPUs)
		o.sumMem, o.sumVC, o.sumGPU = o.sumMem+n.MemoryMiB, o.sumVC+n.VCores, o.sumGPU+n.GPUs
	}
	return o
}

func (o labelOffer) String() string {
	if o.nodes == 0 {
		return "no running node"
	}
	nodes := "1 node"
	if o.nodes > 1 {
		nodes = fmt.Sprintf("%d nodes", o.nodes)
	}
	return fmt.Sprintf("%s, the largest with %s", nodes,
		taskspec.Resources{VCores: int32(o.maxVC), MemoryMiB: o.maxMem, GPUs: o.maxGPU}.String()+gpuSuffix(o.maxGPU))
}

// gpuSuffix says "0 GPUs" explicitly, which Resources.String leaves out.
func gpuSuffix(n int64) string {
	if n == 0 {
		return ", 0 GPUs"
	}
	return ""
}

// Offers describe, per label ("" for nodes without one), what the
// cluster offers the job's queue there, one sentence each: for the AM's
// diagnostics when tasks cannot be allocated.
func Offers(cs Cluster) map[string]string {
	out := map[string]string{}
	for _, label := range append([]string{""}, cs.Labels...) {
		q := cs.Queue
		if !q.canUse(label) {
			out[label] = fmt.Sprintf("queue %s cannot use %s", q.Name, LabelName(label))
			continue
		}
		s := fmt.Sprintf("queue %s on %s: %s", q.Name, LabelName(label), cs.offer(label))
		if c, ok := q.Capacity[label]; ok {
			s += fmt.Sprintf("; the queue's capacity there %s (max %s)", pct(c), pct(q.MaxCapacity[label]))
		} else if q.Capacity != nil {
			s += "; the queue has no capacity there"
		}
		out[label] = s
	}
	return out
}

func pct(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".") + "%"
}

// AM is the ApplicationMaster's container as the job asks it.
type AM struct {
	NodeLabel string
	Resources taskspec.Resources
}

// Check refuses, as a *taskspec.ValidationError, a job the cluster can
// never place: per label (the queue's default for requests without one),
// counting the ApplicationMaster's container, a label the cluster does not
// have or the queue may not use, a queue without capacity there, a
// container larger than every node of its label or asking GPUs where there
// are none, and containers that together exceed the label's nodes (every
// task of a job runs at once). What merely does not fit now passes: the
// AM's allocation deadline covers it.
func Check(job taskspec.Job, am AM, cs Cluster) error {
	order, byLabel := demands(job, am, cs)
	if err := checkSpread(job, cs); err != nil {
		return err
	}
	if err := checkColocate(job, cs); err != nil {
		return err
	}
	for _, label := range order {
		if err := checkLabel(cs, label, byLabel[label]); err != nil {
			return err
		}
	}
	return nil
}

// demands are the containers the job needs, grouped by the label they land
// on, labels in the order the job first names them; the AM's come last.
func demands(job taskspec.Job, am AM, cs Cluster) ([]string, map[string][]demand) {
	byLabel := map[string][]demand{}
	var order []string
	add := func(label string, d demand) {
		label = cs.effectiveLabel(label)
		if _, ok := byLabel[label]; !ok {
			order = append(order, label)
		}
		byLabel[label] = append(byLabel[label], d)
	}
	for _, g := range job.Tasks {
		n := g.Instances
		if job.MinWorkers > 0 && g.Type == taskspec.Worker {
			// An elastic job trains once --min-workers run; the others may
			// wait for room that never comes (the AM's deadline goes on
			// without them, core/elastic_alloc.go).
			n = min(n, job.MinWorkers)
		}
		add(job.NodeLabelFor(g), demand{what: string(g.Type), typ: g.Type, count: int64(n), res: g.Resources})
	}
	add(am.NodeLabel, demand{what: "the ApplicationMaster", count: 1, am: true, res: am.Resources})
	return order, byLabel
}

// fixFor is the option that moves d elsewhere.
func fixFor(d demand) string {
	if d.am {
		return "--am-node-label"
	}
	return "--node-label"
}

// checkLabel refuses the containers ds on label when the cluster cannot
// hold them there: the label unknown or closed to the queue, the queue
// without capacity there, a container larger than every node, or all of
// them together more than the label's nodes.
func checkLabel(cs Cluster, label string, ds []demand) error {
	first, q := ds[0], cs.Queue
	fail := func(format string, args ...any) error {
		return &taskspec.ValidationError{TaskType: first.typ, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case label != "" && !slices.Contains(cs.Labels, label):
		return fail("%s asks node label %q, which the cluster does not have (its labels: %s); use one of them or change %s",
			first.what, label, listOrNone(cs.Labels), fixFor(first))
	case !q.canUse(label):
		return fail("queue %s cannot use node label %q (it may use: %s), which %s asks; use a queue that can (--queue) or change %s",
			q.Name, label, listOrNone(q.AccessibleLabels), first.what, fixFor(first))
	case q.Capacity != nil && q.Capacity[label] <= 0:
		return fail("queue %s has no capacity on %s, where %s would run; use a queue with capacity there (--queue) or change %s",
			q.Name, LabelName(label), first.what, fixFor(first))
	}
	o := cs.offer(label)
	if o.nodes == 0 {
		return nil // none running now: the allocation deadline covers it
	}
	for _, d := range ds {
		if d.res.GPUs > 0 && o.maxGPU == 0 {
			return &taskspec.ValidationError{TaskType: d.typ, Message: fmt.Sprintf(
				"%s asks %d GPUs per task, but no node %s has any (%s); ask for none, or use a label whose nodes have GPUs (%s, with --queue)",
				d.what, d.res.GPUs, strings.TrimPrefix(LabelName(label), "nodes "), o, fixFor(d))}
		}
		if !fitsOne(d.res, cs, label) {
			return &taskspec.ValidationError{TaskType: d.typ, Message: fmt.Sprintf(
				"%s (%s) is larger than every node %s (%s); ask for less%s",
				d.what, d.shape(), strings.TrimPrefix(LabelName(label), "nodes "), o, orElsewhere(d, fixFor(d)))}
		}
	}
	if over, parts := overTheLabel(ds, cs, label, o); over != "" {
		hint := "ask for fewer or smaller tasks"
		if len(ds) > 1 && ds[len(ds)-1].am {
			hint += ", or run the ApplicationMaster elsewhere (--am-node-label)"
		}
		return fail("the job can never run: its containers on %s (%s) must all run at once and need %s (%s); %s",
			LabelName(label), strings.Join(parts, ", "), over, o, hint)
	}
	return nil
}

// overTheLabel says what ds need together beyond what label's nodes have
// ("" when they fit), and lists ds in words.
func overTheLabel(ds []demand, cs Cluster, label string, o labelOffer) (over string, parts []string) {
	var mem, vc, gpu int64
	for _, d := range ds {
		mem += d.count * d.res.MemoryMiB
		vc += d.count * int64(d.res.VCores)
		gpu += d.count * d.res.GPUs
		n := ""
		if d.count > 1 {
			n = fmt.Sprintf("%d × ", d.count)
		}
		parts = append(parts, fmt.Sprintf("%s %s%s", d.what, n, d.res))
	}
	switch {
	case mem > o.sumMem:
		over = fmt.Sprintf("%s of memory, but those nodes have %s in all", memText(mem), memText(o.sumMem))
	case vc > o.sumVC:
		over = fmt.Sprintf("%d vcores, but those nodes have %d in all", vc, o.sumVC)
	case gpu > o.sumGPU:
		over = fmt.Sprintf("%d GPUs, but those nodes have %d in all", gpu, o.sumGPU)
	default:
		over = bigOnes(ds, cs, label, o)
	}
	return over, parts
}

// fitsOne reports whether some node of label holds r.
func fitsOne(r taskspec.Resources, cs Cluster, label string) bool {
	for _, n := range cs.Nodes {
		if n.Label == label && r.MemoryMiB <= n.MemoryMiB && int64(r.VCores) <= n.VCores && r.GPUs <= n.GPUs {
			return true
		}
	}
	return false
}

// bigOnes is a second necessary condition: containers larger than half the
// largest node (in one resource) cannot share a node, so there must be as
// many nodes able to hold one as there are of them.
func bigOnes(ds []demand, cs Cluster, label string, o labelOffer) string {
	var big int64
	for _, d := range ds {
		if 2*d.res.MemoryMiB > o.maxMem || 2*int64(d.res.VCores) > o.maxVC || o.maxGPU > 0 && 2*d.res.GPUs > o.maxGPU {
			big += d.count
		}
	}
	if big <= int64(o.nodes) {
		return ""
	}
	return fmt.Sprintf("a node each for %d containers larger than half a node, but there are %d such nodes", big, o.nodes)
}

func orElsewhere(d demand, fix string) string {
	if d.am {
		return " (--am-memory, --am-vcores), or run it elsewhere (" + fix + ")"
	}
	return ", or use a label with larger nodes (" + fix + ")"
}

func memText(mib int64) string {
	return taskspec.Resources{MemoryMiB: mib}.String()[len("0 vcores, "):]
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	s := append([]string(nil), l...)
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// checkSpread refuses a spread (--spread) the cluster's nodes can never
// hold: per label the spread tasks land on (the queue's default for groups
// that name none), more of them than RUNNING nodes with that label. With
// no node running there, the allocation deadline covers it, as for any
// task.
func checkSpread(job taskspec.Job, cs Cluster) error {
	if job.Spread == "" {
		return nil
	}
	count := map[string]int{}
	var order []string
	for _, g := range job.Tasks {
		if !job.Spreads(g.Type) {
			continue
		}
		label := cs.effectiveLabel(job.NodeLabelFor(g))
		if _, ok := count[label]; !ok {
			order = append(order, label)
		}
		count[label] += g.Instances
	}
	for _, label := range order {
		nodes := cs.offer(label).nodes
		if nodes == 0 || count[label] <= nodes {
			continue
		}
		what := "tasks"
		if job.Spread != taskspec.SpreadAll {
			what = job.Spread + " tasks"
		}
		running := fmt.Sprintf("there are %d running", nodes)
		if nodes == 1 {
			running = "there is 1 running"
		}
		return &taskspec.ValidationError{TaskType: taskspec.TaskType(strings.TrimPrefix(job.Spread, taskspec.SpreadAll)), Message: fmt.Sprintf(
			"the job can never run: placement constraint %s needs a node each for its %d %s on %s, but %s; ask for at most %d, or drop --spread",
			job.SpreadText(), count[label], what, LabelName(label), running, nodes)}
	}
	return nil
}

// checkColocate refuses a colocation (--colocate A=B) the cluster can
// never hold: A's and B's tasks on different node labels (the queue's
// default for groups that name none), since a node has one label; and an
// --apart A=B whose spread B tasks take every node of A's label.
func checkColocate(job taskspec.Job, cs Cluster) error {
	labels := map[taskspec.TaskType]string{}
	for _, g := range job.Tasks {
		labels[g.Type] = cs.effectiveLabel(job.NodeLabelFor(g))
	}
	for _, a := range job.Affinities {
		if a.Apart {
			if err := checkApart(job, cs, a, labels); err != nil {
				return err
			}
			continue
		}
		if labels[a.Type] == labels[a.Other] {
			continue
		}
		return &taskspec.ValidationError{TaskType: a.Type, Message: fmt.Sprintf(
			"the job can never run: placement constraint %s, but %s tasks run on %s and %s tasks on %s, and a node has one label; give both the same --node-label, or drop --colocate %s=%s",
			a.Text(), a.Type, LabelName(labels[a.Type]), a.Other, LabelName(labels[a.Other]), a.Type, a.Other)}
	}
	return nil
}

// checkApart refuses --apart A=B when B is spread (one task per node) over
// as many tasks as A's label has running nodes: no node is left without a
// B task. A B that is not spread may share nodes, so it is not refused.
func checkApart(job taskspec.Job, cs Cluster, a taskspec.Affinity, labels map[taskspec.TaskType]string) error {
	if !job.Spreads(a.Other) || labels[a.Type] != labels[a.Other] {
		return nil
	}
	n := 0
	for _, g := range job.Tasks {
		if g.Type == a.Other {
			n = g.Instances
		}
	}
	nodes := cs.offer(labels[a.Type]).nodes
	if nodes == 0 || n < nodes {
		return nil
	}
	return &taskspec.ValidationError{TaskType: a.Type, Message: fmt.Sprintf(
		"the job can never run: placement constraint %s, but the %d spread %s tasks take every one of the %d running %s; ask for fewer %s tasks, or drop --apart %s=%s",
		a.Text(), n, a.Other, nodes, LabelName(labels[a.Type]), a.Other, a.Type, a.Other)}
}
