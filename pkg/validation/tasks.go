package validation

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// checkGlob returns what is wrong with a glob pattern as ScyllaDB Manager compiles them ('*', '?', '[...]' classes,
// '{a,b}' alternatives and '\' escapes), or "".
func checkGlob(pattern string) string {
	depth := 0
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			if i+1 == len(pattern) {
				return `must not end with an unescaped '\'`
			}
			i++
		case '[':
			end := strings.IndexByte(pattern[i+1:], ']')
			if end < 0 {
				return "has a '[' without a closing ']'"
			}
			class := strings.TrimPrefix(pattern[i+1:i+1+end], "!")
			if len(class) == 0 {
				return "has an empty character class '[]'"
			}
			i += end + 1
		case ']':
			return "has a ']' without an opening '['"
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return "has a '}' without an opening '{'"
			}
			depth--
		}
	}
	if depth != 0 {
		return "has a '{' without a closing '}'"
	}
	return ""
}

// validateDCFilters checks datacenter filters: one glob per entry, optionally negated with '!'.
func validateDCFilters(filters []string, path *field.Path) field.ErrorList {
	return validateFilters(filters, path, checkDCFilter)
}

// validateKeyspaceFilters checks keyspace filters: a keyspace glob, optionally followed by '.' and a table glob, the
// whole optionally negated with '!'.
func validateKeyspaceFilters(filters []string, path *field.Path) field.ErrorList {
	return validateFilters(filters, path, checkKeyspaceFilter)
}

func validateFilters(filters []string, path *field.Path, check func(string) string) field.ErrorList {
	var allErrs field.ErrorList
	for i, f := range filters {
		if msg := check(f); len(msg) != 0 {
			allErrs = append(allErrs, field.Invalid(path.Index(i), f, msg))
		}
	}
	return allErrs
}

// validateCommaSeparatedFilters checks filters of the ScyllaCluster API, whose entries may hold several patterns
// separated by commas, as the established operator accepted them; the translation splits them into one entry each.
// Every pattern is checked as check does.
func validateCommaSeparatedFilters(filters []string, path *field.Path, check func(string) string) field.ErrorList {
	var allErrs field.ErrorList
	for i, f := range filters {
		if !strings.Contains(f, ",") {
			if msg := check(f); len(msg) != 0 {
				allErrs = append(allErrs, field.Invalid(path.Index(i), f, msg))
			}
			continue
		}
		var patterns []string
		for pattern := range strings.SplitSeq(f, ",") {
			if pattern = strings.TrimSpace(pattern); len(pattern) != 0 {
				patterns = append(patterns, pattern)
			}
		}
		if len(patterns) == 0 {
			allErrs = append(allErrs, field.Invalid(path.Index(i), f, check("")))
			continue
		}
		for _, pattern := range patterns {
			if msg := check(pattern); len(msg) != 0 {
				allErrs = append(allErrs, field.Invalid(path.Index(i), f, fmt.Sprintf("pattern %q: %s", pattern, msg)))
				break
			}
		}
	}
	return allErrs
}

// checkDCFilter returns what is wrong with a datacenter filter, or "".
func checkDCFilter(f string) string {
	pattern := strings.TrimPrefix(f, "!")
	switch {
	case len(strings.TrimSpace(pattern)) == 0:
		return "must be a datacenter glob pattern such as dc1 or !dc2*"
	case strings.Contains(f, ","):
		return "must be a single glob pattern without commas; put every pattern in its own entry"
	}
	if msg := checkGlob(pattern); len(msg) != 0 {
		return "glob pattern " + msg
	}
	return ""
}

// checkKeyspaceFilter returns what is wrong with a keyspace filter, or "".
func checkKeyspaceFilter(f string) string {
	pattern := strings.TrimPrefix(f, "!")
	if strings.Contains(f, ",") {
		return "must be a single glob pattern without commas; put every pattern in its own entry"
	}
	parts := strings.Split(pattern, ".")
	if len(parts) > 2 || slices.ContainsFunc(parts, isBlank) {
		return "must be <keyspace glob> or <keyspace glob>.<table glob>, e.g. ks1, ks1.table_* or !system*"
	}
	for _, part := range parts {
		if msg := checkGlob(part); len(msg) != 0 {
			return "glob pattern " + msg
		}
	}
	return ""
}

// locationPattern is ScyllaDB Manager's location syntax: [<dc>:]<provider>:<bucket>, the bucket without a path.
var locationPattern = regexp.MustCompile(`^(?:([^:,]+):)?(s3|gcs|azure|localstorage):([a-z0-9][a-z0-9.-]*)$`)

// validateLocations checks backup locations: [<dc>:]<provider>:<bucket> with provider s3, gcs, azure or localstorage.
func validateLocations(locations []string, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, l := range locations {
		if !locationPattern.MatchString(l) {
			allErrs = append(allErrs, field.Invalid(path.Index(i), l, "must be [<dc>:]<provider>:<bucket> with provider s3, gcs, azure or localstorage and a bucket of lowercase letters, digits, '.' and '-', e.g. s3:backups or dc1:gcs:dc1-backups"))
		}
	}
	return allErrs
}

// validateDCLimits checks limits written [<dc>:]<n>, as rateLimit, snapshotParallel and uploadParallel are, and that
// a datacenter has at most one.
func validateDCLimits(limits []string, path *field.Path, example string) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for i, l := range limits {
		p := path.Index(i)
		dc, value := "", l
		if j := strings.LastIndexByte(l, ':'); j >= 0 {
			dc, value = l[:j], l[j+1:]
		}
		n, err := strconv.ParseInt(value, 10, 64)
		switch {
		case err != nil || n < 0 || strings.ContainsAny(dc, ":,") || (len(dc) == 0 && strings.Contains(l, ":")) || strings.HasPrefix(value, "+"):
			allErrs = append(allErrs, field.Invalid(p, l, fmt.Sprintf("must be [<dc>:]<non-negative integer>, e.g. %s", example)))
		case seen[dc]:
			what := "the default (no datacenter)"
			if len(dc) != 0 {
				what = fmt.Sprintf("datacenter %q", dc)
			}
			allErrs = append(allErrs, field.Invalid(p, l, fmt.Sprintf("sets %s a second time", what)))
		default:
			seen[dc] = true
		}
	}
	return allErrs
}

// validateTaskNames reports empty names and names used twice, across all lists given in order.
func validateTaskNames(lists []taskNames) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for _, l := range lists {
		for i, name := range l.names {
			p := l.path.Index(i).Child("name")
			switch {
			case len(name) == 0:
				allErrs = append(allErrs, field.Required(p, "every task needs a name"))
			case seen[name]:
				allErrs = append(allErrs, field.Duplicate(p, name))
			default:
				// The name goes to ScyllaDB Manager and, as an annotation, to the task's ScyllaDBManagerTask.
				for _, msg := range validation.IsDNS1123Subdomain(name) {
					allErrs = append(allErrs, field.Invalid(p, name, msg))
				}
			}
			seen[name] = true
		}
	}
	return allErrs
}

type taskNames struct {
	path  *field.Path
	names []string
}

func isBlank(s string) bool { return len(strings.TrimSpace(s)) == 0 }
