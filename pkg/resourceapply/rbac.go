package resourceapply

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// roleBindingImmutableFieldChange reports a change of roleRef, which the API server never updates. An unset
// roleRef.apiGroup is compared as the API server defaults it, rbac.authorization.k8s.io: an unset field must never
// read as a change, which would delete the RoleBinding, and the permissions it grants, for nothing.
func roleBindingImmutableFieldChange(existing, required *rbacv1.RoleBinding) (string, bool) {
	if roleRefOrDefault(existing.RoleRef) != roleRefOrDefault(required.RoleRef) {
		return "roleRef", true
	}
	return "", false
}

func roleRefOrDefault(ref rbacv1.RoleRef) rbacv1.RoleRef {
	if len(ref.APIGroup) == 0 {
		ref.APIGroup = rbacv1.GroupName
	}
	return ref
}
