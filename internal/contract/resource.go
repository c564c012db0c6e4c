package contract

import (
	"net/url"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// Resource is a file on the cluster's filesystem as a YARN LocalResource:
// package hdfs makes them, the job file carries them (JobFile.TaskResources).
// Size and Timestamp are the NameNode's length and modification time of the
// file as it stands, because the NodeManager refuses to localize a resource
// whose file no longer matches them ("changed on src filesystem").
type Resource struct {
	Scheme string // "hdfs"
	Host   string // NameNode host, or the nameservice under HA
	Port   int32  // NameNode port; -1 when the URI has none (nameservices)
	Path   string // absolute path on the filesystem

	Size      int64 // bytes, as the NameNode reports
	Timestamp int64 // modification time, milliseconds since the epoch, as the NameNode reports

	Type       hadoopyarn.LocalResourceTypeProto       // FILE, or ARCHIVE for what the NodeManager should unpack
	Visibility hadoopyarn.LocalResourceVisibilityProto // PUBLIC or PRIVATE for the cache (hdfs.cacheVisibility), APPLICATION for staging
}

// URL is the resource's location, e.g. hdfs://localhost:8020/user/x/a.tgz.
func (r Resource) URL() string {
	host := r.Host
	if r.Port >= 0 {
		host += ":" + strconv.Itoa(int(r.Port))
	}
	return (&url.URL{Scheme: r.Scheme, Host: host, Path: r.Path}).String()
}

func (r Resource) String() string { return r.URL() }

// Proto is the LocalResourceProto for a ContainerLaunchContext's local_resources.
//
// The URL follows YARN's URL.fromPath: port -1 when the filesystem URI has
// none. That -1 matters: YARN's URL.toPath builds a java.net.URI from the
// fields, and an unset port (0) would come back as "hdfs://ns1:0/...".
func (r Resource) Proto() *hadoopyarn.LocalResourceProto {
	return &hadoopyarn.LocalResourceProto{
		Resource: &hadoopyarn.URLProto{
			Scheme: proto.String(r.Scheme),
			Host:   proto.String(r.Host),
			Port:   proto.Int32(r.Port),
			File:   proto.String(r.Path),
		},
		Size:       proto.Int64(r.Size),
		Timestamp:  proto.Int64(r.Timestamp),
		Type:       r.Type.Enum(),
		Visibility: r.Visibility.Enum(),
	}
}
