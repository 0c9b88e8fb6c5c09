package operator

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// WebhookClusterRoleRules are the cluster-wide permissions of the webhook: keeping the caBundle of its
// ValidatingWebhookConfiguration (and MutatingWebhookConfiguration, when mutatingName is not empty) current, and
// checking that the objects a ScyllaDBManagerTask targets exist. Tests of this package check that the webhook needs no
// more and uses every one.
func WebhookClusterRoleRules(validatingName, mutatingName string) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{
		{
			// Cached (metadata only) for the existence of a task's target; a cache miss is read with a get.
			APIGroups: []string{"scylla.scylladb.com"},
			Resources: []string{"scylladbclusters", "scylladbdatacenters"},
			Verbs:     []string{"get", "list", "watch"},
		},
		{
			// Watched by name (a metadata.name field selector, which RBAC authorizes by name) and updated when a
			// caBundle differs.
			APIGroups:     []string{"admissionregistration.k8s.io"},
			Resources:     []string{"validatingwebhookconfigurations"},
			ResourceNames: []string{validatingName},
			Verbs:         []string{"list", "watch", "update"},
		},
	}
	if len(mutatingName) != 0 {
		rules = append(rules, rbacv1.PolicyRule{
			APIGroups:     []string{"admissionregistration.k8s.io"},
			Resources:     []string{"mutatingwebhookconfigurations"},
			ResourceNames: []string{mutatingName},
			Verbs:         []string{"list", "watch", "update"},
		})
	}
	return rules
}

// WebhookNamespaceRules are the permissions of the webhook in its own namespace, granted by a Role: its serving
// certificate Secret.
func WebhookNamespaceRules(secretName string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{
			// Watched by name; read with a get when another replica created it first; updated on renewal.
			APIGroups:     []string{""},
			Resources:     []string{"secrets"},
			ResourceNames: []string{secretName},
			Verbs:         []string{"get", "list", "watch", "update"},
		},
		{
			// RBAC can't limit a create to a name.
			APIGroups: []string{""},
			Resources: []string{"secrets"},
			Verbs:     []string{"create"},
		},
	}
}
