package client

import (
	"context"

	"github.com/tfyarn/tfyarn/clusterinfo"
	"github.com/tfyarn/tfyarn/internal/clusterquery"
)

// Cluster asks the ResourceManager for its NodeManagers, nodes, queues,
// node labels and resource types, and derives the largest container it can
// give (see clusterinfo.MaxAllocation). The work is internal/clusterquery's.
func (c *Client) Cluster(ctx context.Context) (*clusterinfo.Cluster, error) {
	rm, err := c.session.RM()
	if err != nil {
		return nil, err
	}
	v, err := clusterquery.Fetch(ctx, rm, clusterquery.SchedulerMaxFrom(c.conf))
	if err != nil {
		return nil, err
	}
	return &v, nil
}
