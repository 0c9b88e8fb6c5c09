// Package sysctl reads and sets kernel parameters through /proc/sys, as sysctl(8) does: the parameters of a
// ScyllaCluster's spec.sysctls, which a privileged init container of every ScyllaDB pod sets before ScyllaDB starts.
package sysctl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ProcSysDir is where the kernel exposes its parameters.
const ProcSysDir = "/proc/sys"

// Setting is a kernel parameter and the value to give it.
type Setting struct {
	// Key names the parameter as sysctl(8) does: names separated by '.' (fs.aio-max-nr) or by '/'.
	Key string
	// Value is written as it is; the kernel parses it.
	Value string
}

func (s Setting) String() string {
	return s.Key + "=" + s.Value
}

// namePattern matches one name of a key: what /proc/sys names are made of, and '*', which matches any part of one
// name (net.ipv4.conf.*.rp_filter sets it for every interface). '.' is allowed inside a name (a VLAN interface,
// eth0.100) only when '/' separates the names.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_+:@*-][a-zA-Z0-9_.+:@*-]*$`)

// ErrInvalid is wrapped by every error of Parse and Path.
var ErrInvalid = errors.New("invalid sysctl")

// Parse reads a "key=value" setting, as spec.sysctls lists them (fs.aio-max-nr=30000000); blanks around the key and
// the value are dropped. Both must be non-empty and the key a parameter name (Path).
func Parse(s string) (Setting, error) {
	key, value, ok := strings.Cut(s, "=")
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if !ok || len(value) == 0 {
		return Setting{}, fmt.Errorf("%w %q: must be key=value, e.g. fs.aio-max-nr=30000000", ErrInvalid, s)
	}
	if _, err := Path("", key); err != nil {
		return Setting{}, err
	}
	return Setting{Key: key, Value: value}, nil
}

// ParseAll parses every setting of list (Parse), naming the index of the first that is invalid.
func ParseAll(list []string) ([]Setting, error) {
	settings := make([]Setting, 0, len(list))
	for i, s := range list {
		setting, err := Parse(s)
		if err != nil {
			return nil, fmt.Errorf("sysctl %d: %w", i, err)
		}
		settings = append(settings, setting)
	}
	return settings, nil
}

// Path returns the file of key under dir (ProcSysDir). As sysctl(8) reads a key, its first separator tells which
// separates names: with '.', every '.' does and a '/' stands for a '.' inside a name (net.ipv4.conf.eth0/100.forwarding
// is net/ipv4/conf/eth0.100/forwarding); with '/', every '/' does and '.' is part of a name. A '*' in a name makes the
// path a pattern (filepath.Match). A key with an empty name, a name "." or "..", or characters no parameter has
// (blanks, other glob characters) is refused.
func Path(dir, key string) (string, error) {
	if len(key) == 0 {
		return "", fmt.Errorf("%w: the key is empty", ErrInvalid)
	}
	rel := key
	if i := strings.IndexAny(key, "./"); i >= 0 && key[i] == '.' {
		rel = strings.Map(func(r rune) rune {
			switch r {
			case '.':
				return '/'
			case '/':
				return '.'
			}
			return r
		}, key)
	}
	for _, name := range strings.Split(rel, "/") {
		if name == "." || name == ".." || !namePattern.MatchString(name) {
			return "", fmt.Errorf("%w key %q: must be names of letters, digits and '_', '-', '+', ':', '@', '*' separated by '.' or '/', e.g. fs.aio-max-nr", ErrInvalid, key)
		}
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}

// Result says what Set did with one parameter.
type Result struct {
	Setting Setting
	// Parameter is the parameter's key, with the names a '*' of Setting.Key matched.
	Parameter string
	// Missing is true when the kernel has no such parameter, or none matches a pattern: nothing was set.
	Missing bool
	// Previous is the value the parameter had.
	Previous string
	// Written is false when the parameter already had the value.
	Written bool
}

// Set gives each setting its value, in order, under dir (ProcSysDir): every parameter a key with '*' matches, and
// the parameter of any other key. It reads each parameter and writes the value only when it differs (as the kernel
// prints it: blanks between numbers do not count), so that parameters already set need no write access. A parameter
// the kernel does not have, or a pattern that matches none, is reported Missing and skipped, as sysctl -e does: the
// parameters a kernel has differ between versions and configurations. It stops at the first parameter it can't read
// or write otherwise, and returns what it did before.
func Set(dir string, settings []Setting) ([]Result, error) {
	results := make([]Result, 0, len(settings))
	for _, s := range settings {
		path, err := Path(dir, s.Key)
		if err != nil {
			return results, err
		}
		paths := []string{path}
		if strings.Contains(s.Key, "*") {
			if paths, err = parameters(path); err != nil {
				return results, fmt.Errorf("can't expand kernel parameter pattern %s: %w", s.Key, err)
			}
		}
		if len(paths) == 0 {
			results = append(results, Result{Setting: s, Parameter: s.Key, Missing: true})
			continue
		}
		for _, p := range paths {
			r, err := set(dir, p, s)
			if err != nil {
				return results, err
			}
			results = append(results, r)
		}
	}
	return results, nil
}

// parameters returns the parameters pattern matches: the files, not the directories that group them (net.ipv4.*
// matches net/ipv4/conf, a directory, as well as net/ipv4/ip_forward).
func parameters(pattern string) ([]string, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, m := range matches {
		if info, err := os.Stat(m); err == nil && !info.IsDir() {
			files = append(files, m)
		}
	}
	return files, nil
}

// set gives the parameter at path, under dir, the value of s.
func set(dir, path string, s Setting) (Result, error) {
	r := Result{Setting: s, Parameter: s.Key}
	if rel, err := filepath.Rel(dir, path); err == nil && strings.Contains(s.Key, "*") {
		// Named as the kernel names it: '/' separated.
		r.Parameter = filepath.ToSlash(rel)
	}
	current, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		r.Missing = true
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("can't read kernel parameter %s: %w", r.Parameter, err)
	}
	r.Previous = strings.TrimSpace(string(current))
	if !sameValue(r.Previous, s.Value) {
		if err := write(path, s.Value); err != nil {
			return r, fmt.Errorf("can't set kernel parameter %s to %q: %w", r.Parameter, s.Value, err)
		}
		r.Written = true
	}
	return r, nil
}

// sameValue tells whether a parameter that reads current already holds value: the kernel prints the numbers of a
// vector parameter (net.ipv4.ip_local_port_range) separated by tabs, while users write them with spaces.
func sameValue(current, value string) bool {
	return strings.Join(strings.Fields(current), " ") == strings.Join(strings.Fields(value), " ")
}

// write writes value to the existing file path in one write, as the kernel takes a parameter's value.
func write(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	return errors.Join(err, f.Close())
}
