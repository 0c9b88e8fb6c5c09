package objectstore

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// The kinds of data ScyllaDB Manager keeps per cluster, each under backup/<kind>/cluster/<id>/.
const (
	KindMeta   = "meta"
	KindSchema = "schema"
	KindSST    = "sst"
)

// clusterKinds are in the lexical order of their prefixes, so that one cursor key orders all three.
var clusterKinds = []string{KindMeta, KindSchema, KindSST}

// ParseManagerClusterID checks that id is a ScyllaDB Manager cluster ID usable as a backup directory: a UUID in
// canonical form (lowercase, 8-4-4-4-12 hex digits) and not the nil UUID. Other spellings that parse as the same
// UUID (uppercase, braces, "urn:uuid:", no dashes) are refused rather than normalised: the ID names a directory
// textually, Manager always writes the canonical form, and an ID that needs normalising comes from somewhere that
// did not get it from Manager or from our own derivation, so the safe answer is to touch nothing.
func ParseManagerClusterID(id string) (uuid.UUID, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return uuid.Nil, fmt.Errorf("manager cluster ID %q is not a UUID: %w", id, err)
	}
	if u.String() != id {
		return uuid.Nil, fmt.Errorf("manager cluster ID %q is not in canonical lowercase form %q", id, u.String())
	}
	if u == uuid.Nil {
		return uuid.Nil, fmt.Errorf("manager cluster ID %q is the nil UUID", id)
	}
	return u, nil
}

// ClusterPrefix returns the prefix of one kind of a cluster's data: backup/<kind>/cluster/<id>/.
func ClusterPrefix(kind, managerClusterID string) (string, error) {
	if _, err := ParseManagerClusterID(managerClusterID); err != nil {
		return "", err
	}
	switch kind {
	case KindMeta, KindSchema, KindSST:
	default:
		return "", fmt.Errorf("unknown backup data kind %q", kind)
	}
	return "backup/" + kind + "/cluster/" + managerClusterID + "/", nil
}

// ClusterPrefixes returns the directory of a cluster in a backup bucket: the three prefixes under which ScyllaDB
// Manager keeps its backups, backup/meta/cluster/<id>/, backup/schema/cluster/<id>/ and backup/sst/cluster/<id>/,
// in lexical order. It refuses an ID ParseManagerClusterID refuses.
func ClusterPrefixes(managerClusterID string) ([]string, error) {
	prefixes := make([]string, 0, len(clusterKinds))
	for _, kind := range clusterKinds {
		p, err := ClusterPrefix(kind, managerClusterID)
		if err != nil {
			return nil, err
		}
		prefixes = append(prefixes, p)
	}
	return prefixes, nil
}

// IsClusterKey reports whether key belongs to the directory of the cluster with managerClusterID, so that it may be
// deleted with it: key must be strictly under one of ClusterPrefixes (the prefix itself is not), and the part after
// the prefix must be a plain relative path: no empty, "." or ".." segment (a trailing "/" of a directory marker
// excepted), no backslash and no control character, so that no store or gateway that interprets keys as paths can
// resolve it outside the directory. It is false for an ID ClusterPrefixes refuses.
func IsClusterKey(managerClusterID, key string) bool {
	prefixes, err := ClusterPrefixes(managerClusterID)
	if err != nil {
		return false
	}
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(key, p); ok {
			return isPlainRelativePath(rest)
		}
	}
	return false
}

// isPlainRelativePath reports whether p is a non-empty relative path whose segments are all proper names.
func isPlainRelativePath(p string) bool {
	// A directory marker object ("dir/") ends with an empty segment; it is still inside the directory.
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return false
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return false
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "", ".", "..":
			return false
		}
	}
	return true
}
