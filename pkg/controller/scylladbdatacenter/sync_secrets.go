package scylladbdatacenter

import (
	"context"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
)

// makeAuthTokenSecret returns the agent auth-token Secret with the token manager-integration.md ("Auth tokens")
// asks for: the one the custom agent config sets (the first rack's, in spec order, that sets one), else the one in
// the Secret named by naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot, else the one already generated,
// else a new one. Its configuration file also holds s3, the s3 section of the datacenter's backup buckets
// (makeBackupS3Config), unless a custom agent config sets s3 itself: the user's wins. Sources are read only as far as
// needed; the user's Secrets are outside the informer caches (readsUserObjects) and read from the API server.
// Errors never include Secret data.
//
// askS3 says whether it matters that a custom agent config sets s3: the buckets gave an s3 section, or could not
// (makeBackupS3Config's spec errors, which a custom s3 section makes moot). customSetsS3 reports it; every custom
// config is read then, else only until one gives a token.
func (c *Controller) makeAuthTokenSecret(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, racks []scyllav1alpha1.RackSpec, owned *ownedObjects, s3 *scyllaagent.S3Config, askS3 bool) (_ *corev1.Secret, customSetsS3 bool, _ error) {
	var sources authTokenSources
	askS3 = askS3 || s3 != nil

	read := map[string]bool{}
	for i := range racks {
		rack := &racks[i]
		ref := agentCustomConfigSecretRef(rack)
		if len(ref) == 0 || read[ref] {
			continue
		}
		if len(sources.customConfig) != 0 && (!askS3 || customSetsS3) {
			break
		}
		read[ref] = true
		secret, err := c.kubeClient.CoreV1().Secrets(sdc.Namespace).Get(ctx, ref, metav1.GetOptions{})
		if err != nil {
			return nil, false, fmt.Errorf("can't get the custom agent config Secret %q of rack %q: %w", ref, rack.Name, err)
		}
		config := secret.Data[naming.ScyllaDBManagerAgentConfigKey]
		token, err := scyllaagent.AuthTokenFromConfig(config)
		if err != nil {
			return nil, false, newSpecError("can't read key %q of the custom agent config Secret %q: %w", naming.ScyllaDBManagerAgentConfigKey, ref, err)
		}
		if len(token) != 0 && len(sources.customConfig) == 0 {
			sources.customConfig = token
		}
		if askS3 {
			// AuthTokenFromConfig parsed the same file.
			sets, _ := scyllaagent.ConfigSetsS3(config)
			customSetsS3 = customSetsS3 || sets
		}
	}
	if customSetsS3 {
		klog.FromContext(ctx).V(2).Info("Leaving the backup buckets' s3 settings out of the agent configuration: a custom agent config sets s3")
		s3 = nil
	}

	if ref, ok := sdc.Annotations[naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot]; ok && len(sources.customConfig) == 0 {
		secret, err := c.kubeClient.CoreV1().Secrets(sdc.Namespace).Get(ctx, ref, metav1.GetOptions{})
		if err != nil {
			return nil, false, fmt.Errorf("can't get the agent auth-token Secret %q named by annotation %q: %w", ref, naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot, err)
		}
		token, err := scyllaagent.AuthTokenFromConfig(secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
		if err != nil {
			return nil, false, fmt.Errorf("can't read key %q of the agent auth-token Secret %q: %w", naming.ScyllaDBManagerAgentAuthTokenKey, ref, err)
		}
		if len(token) == 0 {
			return nil, false, fmt.Errorf("can't read the agent auth token from Secret %q named by annotation %q: key %q sets no auth_token", ref, naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot, naming.ScyllaDBManagerAgentAuthTokenKey)
		}
		sources.override = token
	}

	existing, hasExisting := owned.secrets[naming.AgentAuthTokenSecretName(sdc.Name)]
	if hasExisting && len(sources.customConfig) == 0 && len(sources.override) == 0 {
		token, err := scyllaagent.AuthTokenFromConfig(existing.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
		if err != nil {
			// Our own Secret is unreadable: a new token replaces it.
			klog.FromContext(ctx).V(2).Info("Replacing an unreadable agent auth token", "secret", klog.KObj(existing))
		}
		sources.existing = token
	}

	token, err := chooseAuthToken(sources, c.generateAuthToken)
	if err != nil {
		return nil, false, err
	}
	var hmacKey []byte
	if hasExisting {
		hmacKey = existing.Data[naming.ScyllaDBManagerAgentAuthTokenHMACKeyKey]
	}
	if len(hmacKey) == 0 {
		if hmacKey, err = c.generateAuthTokenHMACKey(); err != nil {
			return nil, false, fmt.Errorf("can't make the agent auth-token Secret: %w", err)
		}
	}
	secret, err := makeAgentAuthTokenSecret(sdc, token, hmacKey, s3)
	return secret, customSetsS3, err
}

// syncSecrets applies the agent auth-token Secret; makeErr is why it could not be built, if it could not, and
// backupErr why some backup bucket's credentials are left out of it (makeBackupS3Config). applied reports whether the
// Secret is as required, which the StatefulSets wait for: their pods carry a hash of its configuration file.
func (c *Controller) syncSecrets(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, owned *ownedObjects, authTokenSecret *corev1.Secret, makeErr, backupErr error, applied *bool) ([]metav1.Condition, error) {
	if makeErr != nil {
		return nil, withBackupErr(makeErr, backupErr)
	}
	actual, progressing, err := applyAndPrune(ctx, c, sdc,
		c.kubeClient.CoreV1().Secrets(sdc.Namespace), c.secretLister.Secrets(sdc.Namespace),
		owned, owned.secrets, authTokenSecret)
	_, *applied = actual.byName[authTokenSecret.Name]
	return progressing, withBackupErr(err, backupErr)
}

// withBackupErr returns err, aggregated with backupErr when there is one: a spec error of the backup buckets must not
// hide a transient error that needs a retry (isSpecOnly).
func withBackupErr(err, backupErr error) error {
	if backupErr == nil {
		return err
	}
	return utilerrors.NewAggregate([]error{err, backupErr})
}
