package resourceapply

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// roleBindingImmutableFieldChange reports a change of roleRef, which the API server never updates.
func roleBindingImmutableFieldChange(existing, required *rbacv1.RoleBinding) (string, bool) {
	if existing.RoleRef != required.RoleRef {
		return "roleRef", true
	}
	return "", false
}
