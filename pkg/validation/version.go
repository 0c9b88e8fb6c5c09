package validation

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// scyllaDBVersion is a ScyllaDB release: major.minor.patch, with a pre-release (rc) sorting before the release.
type scyllaDBVersion struct {
	major, minor, patch int
	preRelease          bool
}

var versionPattern = regexp.MustCompile(`^v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?(?:[-~.]?(rc[0-9]*|dev.*|[a-z].*))?$`)

// parseScyllaDBVersion parses a ScyllaDB image tag such as 2025.1.2, 6.2 or 2026.2.0-rc1; ok is false for anything
// else (latest, digests).
func parseScyllaDBVersion(tag string) (scyllaDBVersion, bool) {
	m := versionPattern.FindStringSubmatch(tag)
	if m == nil {
		return scyllaDBVersion{}, false
	}
	var v scyllaDBVersion
	var err error
	for i, dst := range []*int{&v.major, &v.minor, &v.patch} {
		if len(m[i+1]) == 0 {
			continue
		}
		if *dst, err = strconv.Atoi(m[i+1]); err != nil {
			return scyllaDBVersion{}, false
		}
	}
	v.preRelease = len(m[4]) != 0
	return v, true
}

// atLeast tells whether v is major.minor or later; a pre-release of major.minor.0 is not.
func (v scyllaDBVersion) atLeast(major, minor int) bool {
	if v.major != major {
		return v.major > major
	}
	if v.minor != minor {
		return v.minor > minor
	}
	return v.patch > 0 || !v.preRelease
}

// imageTag returns the tag of a container image reference, or "" when it has none or is pinned by digest.
func imageTag(image string) string {
	if strings.Contains(image, "@") {
		return ""
	}
	lastSlash := strings.LastIndexByte(image, '/')
	if i := strings.LastIndexByte(image, ':'); i > lastSlash {
		return image[i+1:]
	}
	return ""
}

// Version requirements.
const (
	parallelNodeOperationsMajor, parallelNodeOperationsMinor = 2026, 2
)

// validateParallelNodeOperations refuses enableParallelNodeOperations=true for ScyllaDB versions that can't bootstrap
// nodes in parallel; version is the image tag, and a tag that isn't a version (a digest, latest) counts as too old.
func validateParallelNodeOperations(enabled *bool, version string, path *field.Path, versionPath string) field.ErrorList {
	if enabled == nil || !*enabled {
		return nil
	}
	v, ok := parseScyllaDBVersion(version)
	if ok && v.atLeast(parallelNodeOperationsMajor, parallelNodeOperationsMinor) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, true, fmt.Sprintf("needs ScyllaDB %d.%d or later, but %s is %q", parallelNodeOperationsMajor, parallelNodeOperationsMinor, versionPath, version))}
}

// validateNodeServiceVersion refuses node Service types other than ClusterIP for ScyllaDB versions that can't
// replace nodes by host ID (expose-options.md): open source before 5.2, enterprise before 2023.1. Only a version
// known to be older is refused: a tag that isn't a version (latest, an image pinned by digest) says nothing about
// the version, and the established operator, which had no such rule, accepted these (a ScyllaDBCluster's default
// Headless Service included).
func validateNodeServiceVersion(serviceType string, version string, path *field.Path, versionPath string) field.ErrorList {
	if serviceType == "ClusterIP" {
		return nil
	}
	v, ok := parseScyllaDBVersion(version)
	if !ok || (v.major >= 2000 && v.atLeast(2023, 1)) || (v.major < 2000 && v.atLeast(5, 2)) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, serviceType, fmt.Sprintf("needs ScyllaDB 5.2 or later (2023.1 or later for enterprise versions) to replace nodes by host ID, but %s is %q", versionPath, version))}
}
