package validation

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/scyllakube/scylla-operator/pkg/sidecar"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateMetadata checks labels and annotations that end up on Kubernetes objects: the API server would refuse the
// objects built from them.
func validateMetadata(labels, annotations map[string]string, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, metav1validation.ValidateLabels(labels, path.Child("labels"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(annotations, path.Child("annotations"))...)
	return allErrs
}

// validateNameIsDNSLabel checks that the name of an object that runs nodes is a DNS label: it is the value of the
// scylla/cluster label of every object made for it (at most 63 characters), and part of the names of its nodes'
// Services and Pods' host names, which are DNS labels (no '.'). An empty name (generateName) is left to the API
// server.
func validateNameIsDNSLabel(name string) field.ErrorList {
	var allErrs field.ErrorList
	if len(name) == 0 {
		return nil
	}
	for _, msg := range validation.IsDNS1123Label(name) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "name"), name, msg+": the name labels the objects made for it and is part of its nodes' Service and host names"))
	}
	return allErrs
}

// validateReadinessGates checks that every gate's condition type is a qualified name, as a Pod's must be.
func validateReadinessGates(gates []corev1.PodReadinessGate, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, g := range gates {
		p := path.Index(i).Child("conditionType")
		for _, msg := range validation.IsQualifiedName(string(g.ConditionType)) {
			allErrs = append(allErrs, field.Invalid(p, string(g.ConditionType), msg))
		}
	}
	return allErrs
}

// validateResources checks that every limit is positive, no request is negative, and no request exceeds its limit.
func validateResources(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var allErrs field.ErrorList
	for _, name := range sortedResourceNames(r.Limits) {
		limit := r.Limits[name]
		if limit.Sign() <= 0 {
			allErrs = append(allErrs, field.Invalid(path.Child("limits").Key(string(name)), limit.String(), "must be greater than 0"))
		}
	}
	for _, name := range sortedResourceNames(r.Requests) {
		request := r.Requests[name]
		p := path.Child("requests").Key(string(name))
		if request.Sign() < 0 {
			allErrs = append(allErrs, field.Invalid(p, request.String(), "must not be negative"))
			continue
		}
		if limit, ok := r.Limits[name]; ok && request.Cmp(limit) > 0 {
			allErrs = append(allErrs, field.Invalid(p, request.String(), fmt.Sprintf("must be less than or equal to the %s limit %s", name, limit.String())))
		}
	}
	return allErrs
}

func sortedResourceNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// validateDNSDomains checks that every DNS domain is a fully qualified domain name.
func validateDNSDomains(domains []string, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, d := range domains {
		p := path.Index(i)
		msgs := validation.IsFullyQualifiedDomainName(p, d)
		allErrs = append(allErrs, msgs...)
	}
	return allErrs
}

// validateExternalSeeds checks every seed as the sidecar does (sidecar.ValidateSeed): a seed it refuses makes every
// pod crash-loop.
func validateExternalSeeds(seeds []string, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, s := range seeds {
		if err := sidecar.ValidateSeed(s); err != nil {
			allErrs = append(allErrs, field.Invalid(path.Index(i), s, err.Error()))
		}
	}
	return allErrs
}

// validateRackNames reports empty and repeated rack names.
func validateRackNames(names []string, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := make(map[string]bool, len(names))
	for i, name := range names {
		p := path.Index(i).Child("name")
		switch {
		case len(name) == 0:
			allErrs = append(allErrs, field.Required(p, "every rack needs a name"))
		case seen[name]:
			allErrs = append(allErrs, field.Duplicate(p, name))
		}
		seen[name] = true
	}
	return allErrs
}

// validateBoolAnnotation checks that annotation key, when present, is "true" or "false".
func validateBoolAnnotation(annotations map[string]string, key string, path *field.Path) field.ErrorList {
	v, ok := annotations[key]
	if !ok {
		return nil
	}
	if _, err := strconv.ParseBool(v); err != nil {
		return field.ErrorList{field.Invalid(path.Key(key), v, `must be "true" or "false"`)}
	}
	return nil
}

// addressArgs are the ScyllaDB arguments whose value is an address of the node's IP family.
var addressArgs = []string{"listen-address", "rpc-address", "broadcast-address", "broadcast-rpc-address", "api-address", "prometheus-address"}

var scyllaArgPattern = regexp.MustCompile(`^--?([a-z0-9_-]+)(?:=(.*))?$`)

// validateAddressArgs checks that the IP addresses args give ScyllaDB belong to family, the cluster's primary IP
// family: a node listening on an IPv6 address in an IPv4 cluster is unreachable. argPath is the path of the i-th
// argument: its list index for a list, the whole field for a command line split into arguments.
func validateAddressArgs(args []string, family corev1.IPFamily, argPath func(i int) *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i := 0; i < len(args); i++ {
		m := scyllaArgPattern.FindStringSubmatch(args[i])
		if m == nil {
			continue
		}
		name := strings.ReplaceAll(m[1], "_", "-")
		if !slices.Contains(addressArgs, name) {
			continue
		}
		value := m[2]
		if !strings.Contains(args[i], "=") {
			if i+1 >= len(args) {
				continue
			}
			i++
			value = args[i]
		}
		ip := net.ParseIP(strings.Trim(value, "[]"))
		if ip == nil {
			continue
		}
		isV4 := ip.To4() != nil
		if isV4 != (family == corev1.IPv4Protocol) {
			allErrs = append(allErrs, field.Invalid(argPath(i), value, fmt.Sprintf("--%s must be an %s address: the cluster's primary IP family is %s", name, family, family)))
		}
	}
	return allErrs
}

// SplitArguments splits a command line into arguments as a POSIX shell would, without expansions: blanks separate
// arguments, single quotes keep everything literally, double quotes keep everything but backslash escapes of ", \,
// $ and `, and a backslash outside quotes escapes the next character.
func SplitArguments(s string) ([]string, error) {
	var args []string
	var current strings.Builder
	inArgument := false
	const (
		unquoted = iota
		singleQuoted
		doubleQuoted
	)
	state := unquoted
	runes := []rune(s)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch state {
		case singleQuoted:
			if r == '\'' {
				state = unquoted
			} else {
				current.WriteRune(r)
			}
		case doubleQuoted:
			switch {
			case r == '"':
				state = unquoted
			case r == '\\' && i+1 < len(runes) && strings.ContainsRune("\"\\$`", runes[i+1]):
				i++
				current.WriteRune(runes[i])
			default:
				current.WriteRune(r)
			}
		default:
			switch {
			case r == ' ' || r == '\t' || r == '\n':
				if inArgument {
					args = append(args, current.String())
					current.Reset()
					inArgument = false
				}
			case r == '\'':
				state, inArgument = singleQuoted, true
			case r == '"':
				state, inArgument = doubleQuoted, true
			case r == '\\':
				if i+1 == len(runes) {
					return nil, fmt.Errorf("%q ends with an unescaped backslash", s)
				}
				i++
				current.WriteRune(runes[i])
				inArgument = true
			default:
				current.WriteRune(r)
				inArgument = true
			}
		}
	}
	if state != unquoted {
		return nil, fmt.Errorf("%q has an unterminated quote", s)
	}
	if inArgument {
		args = append(args, current.String())
	}
	return args, nil
}
