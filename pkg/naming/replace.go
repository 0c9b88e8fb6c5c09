package naming

import "regexp"

// conditionTypeToken matches what a condition type may carry between its prefix and suffix (metav1.Condition's type
// pattern without a domain prefix).
var conditionTypeToken = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)

// maxRackConditionToken bounds the rack part of a rack condition type so that the type is a qualified name (at most 63
// characters), what metav1.Condition validation asks for.
const maxRackConditionToken = 63 - len("Rack-") - len("-"+MemberReplacingConditionSuffix)

// MemberReplacingConditionSuffix ends the type of the ScyllaDBDatacenter condition that says a node of a rack is
// being replaced (RackMemberReplacingConditionType); the ScyllaCluster shows it as the rack's MemberReplacing.
const MemberReplacingConditionSuffix = "MemberReplacing"

// RackMemberReplacingConditionType returns the type of the ScyllaDBDatacenter status condition that is True while a
// node of rack is being replaced: "Rack-<rack>-MemberReplacing". ScyllaDBDatacenter rack statuses have no conditions
// of their own, so the rack is part of the type. A rack name a condition type can't carry (or a very long one) is
// replaced by its hash, so that every rack name gives a valid type.
func RackMemberReplacingConditionType(rack string) string {
	token := rack
	if len(token) > maxRackConditionToken || !conditionTypeToken.MatchString(token) {
		token = "h" + Hash5(rack)
	}
	return "Rack-" + token + "-" + MemberReplacingConditionSuffix
}
