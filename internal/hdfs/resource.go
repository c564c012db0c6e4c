package hdfs

import (
	"os"
	"strings"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// Resource is an HDFS file as a YARN LocalResource. The type is part of the
// job file, so it lives in package contract; uploads return it.
type Resource = contract.Resource

// ResourceType is the type the NodeManager should give a file of this name:
// ARCHIVE for the archives it unpacks (its FSDownload goes by the lower-cased
// suffix: .jar, .zip, .tar.gz, .tgz, .tar), FILE for the rest. Callers that
// want such a file left packed set Resource.Type to FILE.
func ResourceType(name string) hadoopyarn.LocalResourceTypeProto {
	n := strings.ToLower(name)
	for _, ext := range []string{".tar.gz", ".tgz", ".tar", ".zip", ".jar"} {
		if strings.HasSuffix(n, ext) && len(n) > len(ext) {
			return hadoopyarn.LocalResourceTypeProto_ARCHIVE
		}
	}
	return hadoopyarn.LocalResourceTypeProto_FILE
}

// resource describes the file at p from the NameNode's own status of it.
func (fs *FS) resource(p string, fi os.FileInfo, vis hadoopyarn.LocalResourceVisibilityProto) Resource {
	return Resource{
		Scheme: "hdfs",
		Host:   fs.urlHost,
		Port:   fs.urlPort,
		Path:   p,
		Size:   fi.Size(),
		// colinmarc builds ModTime from the NameNode's milliseconds, so
		// UnixMilli gives them back exactly.
		Timestamp:  fi.ModTime().UnixMilli(),
		Type:       ResourceType(p),
		Visibility: vis,
	}
}
