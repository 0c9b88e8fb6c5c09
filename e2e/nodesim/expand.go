package nodesim

import "strings"

// expand replaces $(NAME) references in s the way the kubelet expands a container's command, args and env values:
// a defined NAME is replaced by its value, an undefined one is left as written, "$$" stands for a literal "$", and
// any other "$" is kept.
func expand(s string, lookup func(name string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				// An unterminated reference is copied; what follows it is read normally.
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok && name != "" {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// expandAll expands every element of ss with the variables in env.
func expandAll(ss []string, env map[string]string) []string {
	lookup := func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, expand(s, lookup))
	}
	return out
}
