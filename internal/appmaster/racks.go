package appmaster

import (
	"context"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// clusterRacks is the AM's LoopConfig.NodeRacks: getClusterNodes on the
// RM's client protocol, as the job's user. Only a ParameterServerStrategy
// job replaces a task in place, so no other job asks (a big cluster's node
// list is no small answer). Only on an insecure cluster, where that
// protocol takes the user by SIMPLE auth: on a Kerberized one the AM holds
// no credential for it (its AMRMToken is good for the scheduler protocol
// only, and the client ships no RM delegation token), so the racks come
// from allocate's updated_nodes alone and the others are asked for as
// core.DefaultRack. Nil when it does not ask.
func clusterRacks(jf contract.JobFile) func(context.Context) (map[string]string, error) {
	if jf.Kerberos != nil || !frameworks.WorkersReplacedInPlace(jf.Job) {
		return nil
	}
	return func(ctx context.Context) (map[string]string, error) {
		rm, err := yarn.NewApplicationClient(jf.Config(), yarn.ClientOptions{User: jf.User})
		if err != nil {
			return nil, err
		}
		defer rm.Close()
		nodes, err := rm.GetClusterNodes(ctx)
		if err != nil {
			return nil, err
		}
		return nodeRacks(nodes), nil
	}
}
