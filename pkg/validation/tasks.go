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
	var allErrs field.ErrorList
	for i, f := range filters {
		p := path.Index(i)
		pattern := strings.TrimPrefix(f, "!")
		switch {
		case len(strings.TrimSpace(pattern)) == 0:
			allErrs = append(allErrs, field.Invalid(p, f, "must be a datacenter glob pattern such as dc1 or !dc2*"))
		case strings.Contains(f, ","):
			allErrs = append(allErrs, field.Invalid(p, f, "must be a single glob pattern without commas; put every pattern in its own entry"))
		default:
			if msg := checkGlob(pattern); len(msg) != 0 {
				allErrs = append(allErrs, field.Invalid(p, f, "glob pattern "+msg))
			}
		}
	}
	return allErrs
}

// validateKeyspaceFilters checks keyspace filters: a keyspace glob, optionally followed by '.' and a table glob, the
// whole optionally negated with '!'.
func validateKeyspaceFilters(filters []string, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, f := range filters {
		p := path.Index(i)
		pattern := strings.TrimPrefix(f, "!")
		if strings.Contains(f, ",") {
			allErrs = append(allErrs, field.Invalid(p, f, "must be a single glob pattern without commas; put every pattern in its own entry"))
			continue
		}
		parts := strings.Split(pattern, ".")
		if len(parts) > 2 || slices.ContainsFunc(parts, isBlank) {
			allErrs = append(allErrs, field.Invalid(p, f, "must be <keyspace glob> or <keyspace glob>.<table glob>, e.g. ks1, ks1.table_* or !system*"))
			continue
		}
		for _, part := range parts {
			if msg := checkGlob(part); len(msg) != 0 {
				allErrs = append(allErrs, field.Invalid(p, f, "glob pattern "+msg))
				break
			}
		}
	}
	return allErrs
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
