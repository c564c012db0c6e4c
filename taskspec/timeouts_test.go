package taskspec

import "testing"

// The relations the table in timeouts.go promises.
func TestTimeoutRelations(t *testing.T) {
	if ContainerStopGrace <= ProgramStopGrace+OrphanStopGrace {
		t.Errorf("ContainerStopGrace %s must exceed ProgramStopGrace %s + OrphanStopGrace %s: the launcher's SIGKILLs and exit report come before the NodeManager's hard stop", ContainerStopGrace, ProgramStopGrace, OrphanStopGrace)
	}
	if ContainerStopGrace <= ProgramStopGrace {
		t.Errorf("ContainerStopGrace %s must exceed ProgramStopGrace %s: the launcher's SIGKILL and exit report come before the NodeManager's hard stop", ContainerStopGrace, ProgramStopGrace)
	}
	if LauncherRendezvousTimeout <= DefaultRendezvousTimeout {
		t.Errorf("LauncherRendezvousTimeout %s must exceed DefaultRendezvousTimeout %s: the AM reports a registration timeout itself", LauncherRendezvousTimeout, DefaultRendezvousTimeout)
	}
	if InPlaceWait >= DefaultAllocTimeout {
		t.Errorf("InPlaceWait %s must be shorter than DefaultAllocTimeout %s: a worker that cannot return to its node restarts the cluster instead of failing the job", InPlaceWait, DefaultAllocTimeout)
	}
}
