package fakescyllamanager

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/objectstore"
)

// Backup uploads: when a backup task with a location the fake can reach (Knobs.S3Endpoints) is started, the fake
// uploads a small backup laid out as ScyllaDB Manager lays it out, so that what reads or purges buckets is tested on
// real object keys:
//
//	backup/meta/cluster/<cluster>/dc/<dc>/node/<host ID>/task_<task>_tag_<tag>_manifest.json.gz
//	backup/sst/cluster/<cluster>/dc/<dc>/node/<host ID>/keyspace/<ks>/table/<table>/<version>/me-<gen>-big-{Data.db,TOC.txt}
//	backup/schema/cluster/<cluster>/task_<task>_tag_<tag>_schema.tar.gz
//
// The run is RUNNING while the upload lasts (outside the fake's lock), then ends as the knobs say, or in ERROR
// with the store's error as its cause. The start request answers once the upload is over, so a test sees the
// objects as soon as its call returns.

// uploadTimeout bounds one run's upload.
const uploadTimeout = 2 * time.Minute

// S3Endpoint says how the fake reaches the bucket of a backup location over S3.
type S3Endpoint struct {
	// Endpoint is the store's URL, such as http://127.0.0.1:7070; empty means AWS S3.
	Endpoint string `json:"endpoint,omitempty"`
	// Region is the bucket's region.
	Region string `json:"region,omitempty"`
	// AccessKeyID and SecretAccessKey are the credentials; empty means the environment's.
	AccessKeyID     string `json:"accessKeyID,omitempty"`
	SecretAccessKey string `json:"secretAccessKey,omitempty"`
}

func (e S3Endpoint) config() objectstore.Config {
	return objectstore.Config{
		Endpoint:        e.Endpoint,
		Region:          e.Region,
		AccessKeyID:     e.AccessKeyID,
		SecretAccessKey: e.SecretAccessKey,
		// The run fails at the first error, as a test expects when it stops the store.
		MaxAttempts: 1,
	}
}

func validateS3Endpoint(providerBucket string, e S3Endpoint) error {
	l, err := parseLocation(providerBucket)
	if err != nil {
		return err
	}
	if l.DC != "" || l.Provider != "s3" {
		return fmt.Errorf("S3 endpoint location %q must be s3:<bucket>", providerBucket)
	}
	if _, err := objectstore.New(e.config()); err != nil {
		return fmt.Errorf("S3 endpoint of %q: %w", providerBucket, err)
	}
	return nil
}

// SetS3Endpoint makes the fake upload backups for location "s3:<bucket>" to the bucket through e.
func (s *Server) SetS3Endpoint(location string, e S3Endpoint) error {
	return s.UpdateKnobs(func(k *Knobs) {
		if k.S3Endpoints == nil {
			k.S3Endpoints = map[string]S3Endpoint{}
		}
		k.S3Endpoints[location] = e
	})
}

// RemoveS3Endpoint stops uploads for location.
func (s *Server) RemoveS3Endpoint(location string) {
	_ = s.UpdateKnobs(func(k *Knobs) { delete(k.S3Endpoints, location) })
}

// uploadObject is an object to upload.
type uploadObject struct {
	key  string
	data []byte
}

// uploadTarget is what one run uploads to one location.
type uploadTarget struct {
	// location is "<provider>:<bucket>".
	location string
	bucket   string
	endpoint S3Endpoint
	objects  []uploadObject
}

// backupUpload is the upload of one run, planned under the lock and carried out outside it.
type backupUpload struct {
	run         *run
	finalStatus string
	targets     []*uploadTarget
}

// Upload is what a run uploaded to one location.
type Upload struct {
	// Location is "<provider>:<bucket>".
	Location string `json:"location"`
	Bucket   string `json:"bucket"`
	// Keys are the uploaded keys, in upload order.
	Keys  []string `json:"keys"`
	Bytes int64    `json:"bytes"`
	// Error is the store's error, if the upload failed after Keys.
	Error string `json:"error,omitempty"`
}

// planBackupTargetsLocked returns the locations a run of backup task t uploads to: those with an S3 endpoint that
// a backed-up datacenter uses; none when the properties do not decode. It also returns what planBackupUploadLocked
// needs. The caller holds s.mu.
func (s *Server) planBackupTargetsLocked(c *cluster, t *task) ([]*uploadTarget, backupProperties, Topology, []string) {
	var p backupProperties
	if err := decodeProperties(t.Properties, &p); err != nil {
		return nil, p, Topology{}, nil
	}
	topo := s.topology(c.Host).deepCopy()
	dcs, err := matchGlobs(p.DC, datacenterNames(topo))
	if err != nil {
		return nil, p, topo, nil
	}
	keyspaces, err := matchKeyspaces(p.Keyspace, topo.Keyspaces)
	if err != nil {
		return nil, p, topo, nil
	}
	topo.Datacenters = slices.DeleteFunc(topo.Datacenters, func(dc Datacenter) bool { return !slices.Contains(dcs, dc.Name) })
	var targets []*uploadTarget
	for _, dc := range topo.Datacenters {
		loc := locationFor(p.Location, dc.Name)
		e, ok := s.knobs.S3Endpoints[loc]
		if !ok || slices.ContainsFunc(targets, func(t *uploadTarget) bool { return t.location == loc }) {
			// Without an S3 endpoint nothing is uploaded for this datacenter.
			continue
		}
		targets = append(targets, &uploadTarget{location: loc, bucket: strings.TrimPrefix(loc, "s3:"), endpoint: e})
	}
	return targets, p, topo, keyspaces
}

// planBackupUploadLocked fills the targets with the objects of run r; the caller holds s.mu.
func (s *Server) planBackupUploadLocked(c *cluster, t *task, r *run, targets []*uploadTarget, p backupProperties, topo Topology, keyspaces []string) *backupUpload {
	tag := snapshotTag(r.StartTime)
	// Each run writes new sstables; earlier ones stay, as deduplicated sstables of a node do.
	generation := len(t.Runs)
	byLocation := map[string]*uploadTarget{}
	for _, tg := range targets {
		byLocation[tg.location] = tg
	}
	for _, dc := range topo.Datacenters {
		tg := byLocation[locationFor(p.Location, dc.Name)]
		if tg == nil {
			continue
		}
		for _, n := range dc.Nodes {
			tg.objects = append(tg.objects, nodeBackupObjects(c, t, tag, generation, dc.Name, hostID(n), keyspaces)...)
		}
	}
	if !p.SkipSchema {
		for _, tg := range targets {
			tg.objects = append(tg.objects, uploadObject{
				key:  fmt.Sprintf("backup/schema/cluster/%s/task_%s_tag_%s_schema.tar.gz", c.ID, t.ID, tag),
				data: schemaArchive(keyspaces),
			})
		}
	}
	return &backupUpload{run: r, targets: targets}
}

// locationFor returns the "<provider>:<bucket>" a datacenter backs up to: its own location, else the one without a
// datacenter.
func locationFor(locations []string, dc string) string {
	global := ""
	for _, l := range locations {
		parsed, err := parseLocation(l)
		if err != nil {
			continue
		}
		if parsed.DC == dc {
			return parsed.providerBucket()
		}
		if parsed.DC == "" && global == "" {
			global = parsed.providerBucket()
		}
	}
	return global
}

func snapshotTag(t time.Time) string {
	return "sm_" + t.UTC().Format("20060102150405") + "UTC"
}

// hostID is a node's host ID, or one derived from its address when the topology gives none.
func hostID(n Node) string {
	if n.HostID != "" {
		return n.HostID
	}
	return hashUUID("host/" + n.Address)
}

// hashUUID formats the MD5 of s as a UUID, for stable made-up IDs.
func hashUUID(s string) string {
	h := hexMD5(s)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func hexMD5(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// tableOf is the one table the fake backs up per keyspace.
func tableOf(keyspace string) string {
	switch keyspace {
	case "system_auth":
		return "roles"
	case "system_distributed":
		return "service_levels"
	case "system_traces":
		return "events"
	}
	return "data"
}

// manifestIndex is one table of a manifest.
type manifestIndex struct {
	Keyspace string   `json:"keyspace"`
	Table    string   `json:"table"`
	Version  string   `json:"version"`
	Files    []string `json:"files"`
	Size     int64    `json:"size"`
}

// nodeBackupObjects returns the sstables of one node and its manifest, last as ScyllaDB Manager writes it.
func nodeBackupObjects(c *cluster, t *task, tag string, generation int, dc, host string, keyspaces []string) []uploadObject {
	nodeDir := fmt.Sprintf("cluster/%s/dc/%s/node/%s/", c.ID, dc, host)
	var objects []uploadObject
	var index []manifestIndex
	var total int64
	for _, ks := range keyspaces {
		table := tableOf(ks)
		version := hexMD5(ks + "." + table)
		mi := manifestIndex{Keyspace: ks, Table: table, Version: version}
		for _, component := range []string{"Data.db", "TOC.txt"} {
			file := fmt.Sprintf("me-%d-big-%s", generation, component)
			data := []byte(fmt.Sprintf("fake %s of %s.%s, generation %d, node %s\n", component, ks, table, generation, host))
			objects = append(objects, uploadObject{
				key:  fmt.Sprintf("backup/sst/%skeyspace/%s/table/%s/%s/%s", nodeDir, ks, table, version, file),
				data: data,
			})
			mi.Files = append(mi.Files, file)
			mi.Size += int64(len(data))
		}
		total += mi.Size
		index = append(index, mi)
	}
	manifest := map[string]any{
		"version":      "v2",
		"cluster_id":   c.ID,
		"cluster_name": c.Name,
		"dc":           dc,
		"node_id":      host,
		"task_id":      t.ID,
		"snapshot_tag": tag,
		"index":        index,
		"size":         total,
		"schema":       fmt.Sprintf("backup/schema/cluster/%s/task_%s_tag_%s_schema.tar.gz", c.ID, t.ID, tag),
	}
	objects = append(objects, uploadObject{
		key:  fmt.Sprintf("backup/meta/%stask_%s_tag_%s_manifest.json.gz", nodeDir, t.ID, tag),
		data: gzipBytes(mustJSON(manifest)),
	})
	return objects
}

// schemaArchive is a tar.gz holding one CQL file per keyspace, like Manager's legacy schema archive.
func schemaArchive(keyspaces []string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, ks := range keyspaces {
		table := tableOf(ks)
		cql := fmt.Sprintf("CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy'};\n"+
			"CREATE TABLE %s.%s (id uuid PRIMARY KEY, value text);\n", ks, ks, table)
		// Writes to a bytes.Buffer do not fail.
		_ = tw.WriteHeader(&tar.Header{Name: ks + ".cql", Mode: 0o644, Size: int64(len(cql)), ModTime: time.Unix(0, 0)})
		_, _ = tw.Write([]byte(cql))
	}
	_ = tw.Close()
	_ = gz.Close()
	return buf.Bytes()
}

func gzipBytes(data []byte) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	_, _ = gz.Write(data)
	_ = gz.Close()
	return buf.Bytes()
}

// uploadBackup carries out a planned upload, without the lock, then ends the run.
func (s *Server) uploadBackup(ctx context.Context, u *backupUpload) {
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	var uploads []Upload
	var failures []string
	for _, tg := range u.targets {
		up := Upload{Location: tg.location, Bucket: tg.bucket, Keys: []string{}}
		err := s.uploadTarget(ctx, tg, &up)
		if err != nil {
			up.Error = err.Error()
			failures = append(failures, fmt.Sprintf("upload to %s: %v", tg.location, err))
		}
		uploads = append(uploads, up)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	r := u.run
	r.Uploads = uploads
	var size int64
	for _, up := range uploads {
		size += up.Bytes
	}
	if r.Status != statusRunning {
		// Stopped while uploading: the stop decided the status.
		return
	}
	status := u.finalStatus
	if len(failures) > 0 {
		status = statusError
		r.Cause = strings.Join(failures, "; ")
	}
	r.Status = status
	if status != statusRunning {
		now := s.now()
		r.EndTime = &now
	}
	var progress map[string]any
	if err := json.Unmarshal(r.Progress, &progress); err == nil {
		progress["size"] = size
		progress["uploaded"] = size
		progress["completed_at"] = r.EndTime
		if status == statusDone {
			progress["stage"] = "DONE"
		}
		r.Progress = mustJSON(progress)
	}
}

func (s *Server) uploadTarget(ctx context.Context, tg *uploadTarget, up *Upload) error {
	store, err := s.newObjectStore(tg.endpoint.config())
	if err != nil {
		return err
	}
	for _, obj := range tg.objects {
		if err := store.PutObject(ctx, tg.bucket, obj.key, obj.data); err != nil {
			return err
		}
		up.Keys = append(up.Keys, obj.key)
		up.Bytes += int64(len(obj.data))
	}
	return nil
}
