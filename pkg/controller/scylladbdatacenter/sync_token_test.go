package scylladbdatacenter

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestSyncRollsAgentsOnTokenChangesWithoutExposingAHashOfTheToken(t *testing.T) {
	t.Parallel()

	const tokenHashAnnotation = "scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-hash"
	// Two datacenters with the same token, each with its own key.
	annotations := map[string]string{}
	for _, key := range []string{"first-key", "second-key"} {
		f := newFixture(t, world{sdc: newBasicSDC()})
		f.controller.generateAuthTokenHMACKey = func() ([]byte, error) { return []byte(key), nil }
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
		secret := f.written("secrets", "basic-auth-token").(*corev1.Secret)
		if got := string(secret.Data["auth-token-hmac-key"]); got != key {
			t.Fatalf("the auth-token Secret holds key %q, not %q", got, key)
		}
		got := f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet).Spec.Template.Annotations[tokenHashAnnotation]
		mac := hmac.New(sha256.New, []byte(key))
		mac.Write(secret.Data["auth-token.yaml"])
		if want := hex.EncodeToString(mac.Sum(nil)); got != want {
			t.Errorf("expected the annotation to be the token file's HMAC %q, got %q", want, got)
		}
		annotations[key] = got
	}
	if annotations["first-key"] == annotations["second-key"] {
		t.Errorf("the same token gives the same annotation under two keys: %q", annotations["first-key"])
	}
}

func TestSyncAddsAnHMACKeyToAnAuthTokenSecretWithoutOne(t *testing.T) {
	t.Parallel()

	// What an operator that hashed the token without a key left.
	w := withNodes(convergedWorld(t))
	secret := object[*corev1.Secret](t, w, "basic-auth-token")
	delete(secret.Data, "auth-token-hmac-key")
	secret.Annotations["scylla-operator.scylladb.com/managed-hash"] = "before"
	for _, name := range []string{"basic-dc1-a", "basic-dc1-b"} {
		sts := object[*appsv1.StatefulSet](t, w, name)
		sts.Annotations["scylla-operator.scylladb.com/managed-hash"] = "before"
		sts.Spec.Template.Annotations["scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-hash"] = "sha-of-the-token"
	}
	// The token is kept; the pods roll once for the new annotation.
	w, f := step(t, "upgrade", w, "update secrets basic-auth-token", "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	if got, _ := scyllaagent.AuthTokenFromConfig(f.written("secrets", "basic-auth-token").(*corev1.Secret).Data["auth-token.yaml"]); got != testToken {
		t.Errorf("the token changed to %q", got)
	}
	_, _ = step(t, "steady", w)
}
