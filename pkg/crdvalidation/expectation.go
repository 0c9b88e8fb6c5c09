package crdvalidation

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ExpectPrefix starts the comment lines that state the error a rejected manifest must produce.
const ExpectPrefix = "# expect:"

// Expectation is an error a rejected manifest must produce: the exact field path and a substring of the message.
type Expectation struct {
	// Path is the exact field path, e.g. spec.datacenter.racks[0].storage.
	Path string
	// Message is a substring of the error, e.g. "storage is immutable".
	Message string
}

// String renders the expectation the way it is written in a manifest.
func (e Expectation) String() string {
	return fmt.Sprintf("%s %s: %s", ExpectPrefix, e.Path, e.Message)
}

// MatchesError reports whether an error at path with the given message satisfies the expectation. message is the
// whole error text after the path, e.g. `Invalid value: "x": datacenter name is immutable`, as both
// field.Error.ErrorBody and an API server's status causes give it.
func (e Expectation) MatchesError(path, message string) bool {
	return path == e.Path && strings.Contains(message, e.Message)
}

// Matches reports whether any error in errs satisfies the expectation.
func (e Expectation) Matches(errs field.ErrorList) bool {
	for _, err := range errs {
		if e.MatchesError(err.Field, err.ErrorBody()) {
			return true
		}
	}
	return false
}

// ParseExpectations reads the "# expect: <path>: <message substring>" lines at the start of a manifest, before its
// first non-comment line. The path ends at the first ": ". A manifest without such lines has no expectations.
func ParseExpectations(manifest []byte) ([]Expectation, error) {
	var expectations []Expectation
	scanner := bufio.NewScanner(bytes.NewReader(manifest))
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "#") {
			break
		}
		rest, ok := strings.CutPrefix(line, ExpectPrefix)
		if !ok {
			continue
		}
		path, message, ok := strings.Cut(strings.TrimSpace(rest), ": ")
		if !ok || path == "" || strings.TrimSpace(message) == "" {
			return nil, fmt.Errorf("can't parse expectation %q: want %q", line, ExpectPrefix+" <field path>: <message substring>")
		}
		expectations = append(expectations, Expectation{Path: path, Message: strings.TrimSpace(message)})
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("can't read expectations: %w", err)
	}
	return expectations, nil
}

// Case is a test manifest file: the expectations in its leading comments and its YAML documents. A create case has
// one document; an update case has the old object followed by one or more updates.
type Case struct {
	// Name is the file name without its extension.
	Name string
	// Expectations are the errors the manifest must produce; none for manifests that must be accepted.
	Expectations []Expectation
	// Documents are the YAML documents of the file, in order.
	Documents [][]byte
}

// LoadCases reads every *.yaml file in dir as a Case, sorted by name.
func LoadCases(dir string) ([]Case, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("can't list cases in %q: %w", dir, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("can't load cases: no *.yaml files in %q", dir)
	}
	var cases []Case
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("can't read case %q: %w", p, err)
		}
		expectations, err := ParseExpectations(data)
		if err != nil {
			return nil, fmt.Errorf("can't load case %q: %w", p, err)
		}
		docs, err := SplitDocuments(data)
		if err != nil {
			return nil, fmt.Errorf("can't load case %q: %w", p, err)
		}
		cases = append(cases, Case{
			Name:         strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)),
			Expectations: expectations,
			Documents:    docs,
		})
	}
	return cases, nil
}
