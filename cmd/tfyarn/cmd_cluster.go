package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/clusterinfo"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/urfave/cli/v2"
)

func clusterCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "cluster",
		Usage: "show nodes, queues, node labels, resource types and the largest allocation",
		UsageText: "tfyarn cluster [--output table|json]\n\n" +
			"   tfyarn cluster\n" +
			"   tfyarn cluster --output json | jq '.nodes[] | select(.labels | index(\"gpu\"))'",
		Description: "JSON keys: resource_manager, node_managers, nodes, queues, node_labels, resource_types,\n" +
			"max_allocation. max_allocation is derived (largest node capped by the client configuration's\n" +
			"yarn.scheduler.maximum-allocation-*): the RM reports its own maximum only when creating an application.",
		Flags:        []cli.Flag{outputFlag()},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			out, err := outputNoArgs(c, "cluster")
			if err != nil {
				return err
			}
			return e.withClient(c.Context, e.timeout, func(ctx context.Context, cl *client.Client) error {
				v, err := cl.Cluster(ctx)
				if err != nil {
					return err
				}
				// The basis names where the configuration came from as
				// the user gave it (--conf-dir, HADOOP_CONF_DIR).
				v.MaxAllocation.Basis = clusterinfo.MaxAllocationBasis(v.MaxAllocation.Capped, e.confFrom)
				if out == outputJSON {
					return cliout.JSON(e.stdout, v)
				}
				return writeClusterTables(e.stdout, v)
			})
		},
	}
}

// clusterView is `tfyarn cluster --output json`'s document.
type clusterView = clusterinfo.Cluster

func writeClusterTables(w io.Writer, v *clusterView) error {
	nm := v.NodeManagers
	fmt.Fprintf(w, "ResourceManager: %s\n", strings.Join(v.ResourceManager, ", "))
	fmt.Fprintf(w, "NodeManagers: %d total, %d active, %d lost, %d unhealthy, %d decommissioned\n\n",
		nm.Total, nm.Active, nm.Lost, nm.Unhealthy, nm.Decommissioned)

	nodes := cliout.NewTable("NODE", "STATE", "LABELS", "CONTAINERS", "MEMORY(MiB) USED/TOTAL", "VCORES USED/TOTAL", "GPUS USED/TOTAL")
	for _, n := range v.Nodes {
		nodes.Row(n.ID, n.State, strings.Join(n.Labels, ","), n.Containers, frac(n.MemoryMB), frac(n.VCores), frac(n.GPUs))
	}
	queues := cliout.NewTable("QUEUE", "STATE", "CAPACITY", "MAX-CAPACITY", "USED", "LABELS", "DEFAULT-LABEL")
	for _, q := range v.Queues {
		queues.Row(q.Path, q.State, pct(q.CapacityPercent), pct(q.MaxCapacityPercent), pct(q.CurrentCapacityPercent),
			strings.Join(q.AccessibleLabels, ","), q.DefaultLabelExpression)
	}
	labels := cliout.NewTable("NODE-LABEL", "EXCLUSIVE")
	for _, l := range v.NodeLabels {
		labels.Row(l.Name, l.Exclusive)
	}
	types := cliout.NewTable("RESOURCE-TYPE", "UNITS", "KIND")
	for _, t := range v.ResourceTypes {
		types.Row(t.Name, t.Units, t.Type)
	}
	for _, t := range []*cliout.Table{nodes, queues, labels, types} {
		if _, err := t.WriteTo(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	m := v.MaxAllocation
	var extra []string
	for _, k := range sortedNames(m.Resources) {
		extra = append(extra, fmt.Sprintf(", %s %d", k, m.Resources[k]))
	}
	_, err := fmt.Fprintf(w, "Max allocation: %d MiB, %d vcores%s\n  (%s)\n", m.MemoryMB, m.VCores, strings.Join(extra, ""), m.Basis)
	return err
}

func frac(u clusterinfo.Usage) string { return fmt.Sprintf("%d/%d", u.Used, u.Total) }

func pct(p float64) string { return fmt.Sprintf("%g%%", p) }

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
