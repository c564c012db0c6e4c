package hdfs

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

func TestResourceType(t *testing.T) {
	for name, want := range map[string]hadoopyarn.LocalResourceTypeProto{
		"env.tar.gz":   hadoopyarn.LocalResourceTypeProto_ARCHIVE,
		"ENV.TAR.GZ":   hadoopyarn.LocalResourceTypeProto_ARCHIVE, // FSDownload lower-cases
		"env.tgz":      hadoopyarn.LocalResourceTypeProto_ARCHIVE,
		"env.tar":      hadoopyarn.LocalResourceTypeProto_ARCHIVE,
		"lib.zip":      hadoopyarn.LocalResourceTypeProto_ARCHIVE,
		"dep.jar":      hadoopyarn.LocalResourceTypeProto_ARCHIVE,
		"train.py":     hadoopyarn.LocalResourceTypeProto_FILE,
		"data.gz":      hadoopyarn.LocalResourceTypeProto_FILE,
		"data.tar.bz2": hadoopyarn.LocalResourceTypeProto_FILE, // the NM would not unpack it
		"jar":          hadoopyarn.LocalResourceTypeProto_FILE,
		".zip":         hadoopyarn.LocalResourceTypeProto_FILE,
		"/a/b/x.tgz":   hadoopyarn.LocalResourceTypeProto_ARCHIVE,
	} {
		require.Equal(t, want, ResourceType(name), name)
	}
}

func TestResourceURLAndProto(t *testing.T) {
	for _, tc := range []struct {
		name    string
		r       Resource
		url     string
		urlProt *hadoopyarn.URLProto
	}{
		{
			name: "host and port",
			r:    Resource{Scheme: "hdfs", Host: "localhost", Port: 8020, Path: "/user/a/.tfyarn/cache/ab/env.tgz"},
			url:  "hdfs://localhost:8020/user/a/.tfyarn/cache/ab/env.tgz",
			urlProt: &hadoopyarn.URLProto{Scheme: proto.String("hdfs"), Host: proto.String("localhost"),
				Port: proto.Int32(8020), File: proto.String("/user/a/.tfyarn/cache/ab/env.tgz")},
		},
		{
			// URL.fromURI sets the port to URI.getPort(), -1; 0 would come back
			// from URL.toPath as hdfs://ns1:0/...
			name: "nameservice",
			r:    Resource{Scheme: "hdfs", Host: "ns1", Port: -1, Path: "/user/a/job.json"},
			url:  "hdfs://ns1/user/a/job.json",
			urlProt: &hadoopyarn.URLProto{Scheme: proto.String("hdfs"), Host: proto.String("ns1"),
				Port: proto.Int32(-1), File: proto.String("/user/a/job.json")},
		},
		{
			name: "space in name is escaped in the URL string only",
			r:    Resource{Scheme: "hdfs", Host: "nn", Port: 9000, Path: "/user/a/my file.py"},
			url:  "hdfs://nn:9000/user/a/my%20file.py",
			urlProt: &hadoopyarn.URLProto{Scheme: proto.String("hdfs"), Host: proto.String("nn"),
				Port: proto.Int32(9000), File: proto.String("/user/a/my file.py")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.url, tc.r.URL())
			r := tc.r
			r.Size, r.Timestamp = 5<<20, 1700000000123
			r.Type = hadoopyarn.LocalResourceTypeProto_ARCHIVE
			r.Visibility = hadoopyarn.LocalResourceVisibilityProto_PRIVATE
			p := r.Proto()
			require.True(t, proto.Equal(tc.urlProt, p.GetResource()), "got %v", p.GetResource())
			require.EqualValues(t, 5<<20, p.GetSize())
			require.EqualValues(t, 1700000000123, p.GetTimestamp())
			require.Equal(t, hadoopyarn.LocalResourceTypeProto_ARCHIVE, p.GetType())
			require.Equal(t, hadoopyarn.LocalResourceVisibilityProto_PRIVATE, p.GetVisibility())
			require.Nil(t, p.Pattern)
		})
	}
}
