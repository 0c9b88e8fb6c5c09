package objectstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/minio/minio-go/v7"
)

func TestNewConfig(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-never-shown"
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "AWS in a region with environment credentials", cfg: Config{Region: "eu-west-1"}},
		{name: "S3-compatible store over http", cfg: Config{Endpoint: "http://127.0.0.1:7070", AccessKeyID: "a", SecretAccessKey: secret}},
		{name: "S3-compatible store over https with a trailing slash", cfg: Config{Endpoint: "https://s3.example:9000/", InsecureSkipVerify: true}},
		{name: "endpoint without a scheme", cfg: Config{Endpoint: "localhost:7070"}, wantErr: "must be an http or https URL"},
		{name: "endpoint with another scheme", cfg: Config{Endpoint: "ftp://h"}, wantErr: "must be an http or https URL"},
		{name: "endpoint without a host", cfg: Config{Endpoint: "http://"}, wantErr: "has no host"},
		{name: "endpoint with a path", cfg: Config{Endpoint: "http://h/bucket"}, wantErr: "must not have a path"},
		{name: "endpoint with a query", cfg: Config{Endpoint: "http://h/?x=1"}, wantErr: "must not have a path"},
		{name: "endpoint with user info", cfg: Config{Endpoint: "http://user:" + secret + "@h"}, wantErr: "must not contain user info"},
		{name: "access key without secret", cfg: Config{AccessKeyID: "a"}, wantErr: "must be given together"},
		{name: "secret without access key", cfg: Config{SecretAccessKey: secret}, wantErr: "must be given together"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tc.cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error reveals the secret: %v", err)
			}
		})
	}
}

func TestConfigStringHidesTheSecret(t *testing.T) {
	t.Parallel()
	s := Config{Endpoint: "http://h:1", AccessKeyID: "AKIA", SecretAccessKey: "s3cr3t"}.String()
	if strings.Contains(s, "s3cr3t") || strings.Contains(s, "AKIA") {
		t.Errorf("configuration string reveals credentials: %s", s)
	}
}

// TestStoreErrorsNameBucketAndKeyAndKeepTheCode runs the minio implementation against a server that refuses
// everything, as a store refusing the credentials does.
func TestStoreErrorsNameBucketAndKeyAndKeepTheCode(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code>` +
			`<Message>The access key ID you provided does not exist in our records.</Message></Error>`))
	}))
	defer srv.Close()
	const secret = "s3cr3t-never-shown"
	store, err := New(Config{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: secret, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, existsErr := store.BucketExists(ctx, "bkt")
	_, listErr := store.ListObjects(ctx, "bkt", "backup/sst/", "", 10)
	deleteErr := store.DeleteObjects(ctx, "bkt", []string{"backup/sst/x", "backup/sst/y"})
	putErr := store.PutObject(ctx, "bkt", "backup/sst/z", []byte("data"))
	tests := []struct {
		name  string
		err   error
		names []string
	}{
		{name: "bucket check", err: existsErr, names: []string{`"bkt"`}},
		{name: "listing", err: listErr, names: []string{`"bkt"`, `"backup/sst/"`}},
		{name: "deletion", err: deleteErr, names: []string{`"bkt"`, `"backup/sst/x"`, `"backup/sst/y"`}},
		{name: "upload", err: putErr, names: []string{`"bkt"`, `"backup/sst/z"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("want an error")
			}
			for _, n := range tc.names {
				if !strings.Contains(tc.err.Error(), n) {
					t.Errorf("want the error to name %s, got %v", n, tc.err)
				}
			}
			if strings.Contains(tc.err.Error(), secret) {
				t.Errorf("error reveals the secret: %v", tc.err)
			}
			if !IsAuthError(tc.err) {
				t.Errorf("want an auth error, got code %q from %v", ErrorCode(tc.err), tc.err)
			}
		})
	}
	var doe *DeleteObjectsError
	if !errors.As(deleteErr, &doe) || len(doe.FailedKeys()) != 2 {
		t.Errorf("want both keys reported as failed, got %v", deleteErr)
	}
}

func TestErrorCode(t *testing.T) {
	t.Parallel()
	resp := minio.ErrorResponse{Code: ErrorCodeNoSuchBucket}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "no error", err: nil, want: ""},
		{name: "plain error", err: errors.New("dial tcp: connection refused"), want: ""},
		{name: "store error", err: resp, want: ErrorCodeNoSuchBucket},
		{name: "wrapped store error", err: errors.Join(errors.New("x"), resp), want: ErrorCodeNoSuchBucket},
		{name: "pointer to a store error", err: &resp, want: ErrorCodeNoSuchBucket},
		{name: "per-key error", err: &DeleteObjectsError{Bucket: "bkt", Errors: []KeyError{{Key: "k", Err: resp}}}, want: ErrorCodeNoSuchBucket},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ErrorCode(tc.err); got != tc.want {
				t.Errorf("want %q, got %q", tc.want, got)
			}
		})
	}
}

// TestListObjectsIsOneRequest runs the minio implementation against a server that lists 2500 keys in pages as S3's
// ListObjectsV2 does, and counts the requests each listing makes.
func TestListObjectsIsOneRequest(t *testing.T) {
	t.Parallel()
	keys := make([]string, 2500)
	for i := range keys {
		keys[i] = fmt.Sprintf("backup/sst/%05d", i)
	}
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		q := r.URL.Query()
		maxKeys, err := strconv.Atoi(q.Get("max-keys"))
		if err != nil || maxKeys <= 0 || maxKeys > 1000 {
			maxKeys = 1000
		}
		after := q.Get("start-after")
		if token := q.Get("continuation-token"); token != "" {
			after = token
		}
		var page []string
		for _, k := range keys {
			if strings.HasPrefix(k, q.Get("prefix")) && k > after {
				page = append(page, k)
			}
		}
		truncated := len(page) > maxKeys
		page = page[:min(len(page), maxKeys)]
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
		fmt.Fprintf(&b, "<Name>bkt</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount><MaxKeys>%d</MaxKeys><IsTruncated>%t</IsTruncated>", q.Get("prefix"), len(page), maxKeys, truncated)
		if truncated {
			fmt.Fprintf(&b, "<NextContinuationToken>%s</NextContinuationToken>", page[len(page)-1])
		}
		for _, k := range page {
			fmt.Fprintf(&b, "<Contents><Key>%s</Key><Size>1</Size></Contents>", k)
		}
		b.WriteString("</ListBucketResult>")
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(b.String()))
	}))
	defer srv.Close()
	store, err := New(Config{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		limit, wantObjects int
		startAfter         string
		wantMore           bool
	}{
		{limit: 10, wantObjects: 10, wantMore: true},
		{limit: 1000, wantObjects: 999, wantMore: true},
		{limit: 5000, wantObjects: 999, wantMore: true},
		{limit: 1000, startAfter: keys[1499], wantObjects: 999, wantMore: true},
		{limit: 1000, startAfter: keys[1500], wantObjects: 999, wantMore: false},
		{limit: 1000, startAfter: keys[2000], wantObjects: 499, wantMore: false},
	} {
		requests.Store(0)
		list, err := store.ListObjects(context.Background(), "bkt", "backup/sst/", tc.startAfter, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Objects) != tc.wantObjects || list.More != tc.wantMore {
			t.Errorf("limit %d after %q: got %d objects, more %v; want %d, more %v", tc.limit, tc.startAfter, len(list.Objects), list.More, tc.wantObjects, tc.wantMore)
		}
		if n := requests.Load(); n != 1 {
			t.Errorf("limit %d after %q: %d requests, want 1", tc.limit, tc.startAfter, n)
		}
	}
}
