// Package crds proves the CRDs of deploy/crds/ against a real API server: they install and become Established,
// every example of deploy/examples/ is accepted, and every case of pkg/crdvalidation/testdata/ is rejected or
// accepted by the API server exactly as pkg/crdvalidation (the unit-level harness) says.
//
// Manifests the CRD schemas accept but the admission webhook refuses (rules a schema can't express) are cases of
// e2e/webhook/testdata/invalid/; the webhook suite checks them with the webhook running.
//
// The tests need a local control plane and run with the e2e build tag:
//
//	go test -tags e2e -count=1 ./e2e/crds/...
//
// This file holds the comparison of an API server's rejections with the harness's verdicts; it has unit tests that
// run without a control plane.
package crds

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/pkg/crdvalidation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RulesNotCheckedMessage starts the error an API server adds when blocking schema errors kept it from evaluating
// the CEL rules. It is a consequence of other errors, so expectations need not list it.
const RulesNotCheckedMessage = "some validation rules were not checked"

// strictDecodingMarker precedes the list of errors in the message of a request rejected by strict field
// validation, e.g. `ScyllaCluster in version "v1" cannot be handled as a ScyllaCluster: strict decoding error:
// unknown field "spec.foo"`.
const strictDecodingMarker = "strict decoding error: "

// strictDecodingErrorRE matches one error of a strict decoding failure, as sigs.k8s.io/json and the CRD handler word
// them.
var strictDecodingErrorRE = regexp.MustCompile(`(unknown|duplicate) field "([^"]*)"`)

// Cause is one reason for a rejection: the field path and the message after it, as an API server's StatusCause
// and field.Error.ErrorBody give them (for example `Invalid value: "x": datacenter name is immutable`).
type Cause struct {
	// Field is the field path, e.g. spec.datacenter.racks[0].storage; "<nil>" for errors about the whole object.
	Field string
	// Message is the error text after the path.
	Message string
}

// String renders the cause the way field errors read.
func (c Cause) String() string {
	return c.Field + ": " + c.Message
}

// Rejection is how an API server rejected a request.
type Rejection struct {
	// Causes are the reasons, in the server's order.
	Causes []Cause
	// StrictDecoding is set when the request was rejected while decoding, for unknown or duplicate fields (with
	// fieldValidation=Strict). The server stops there, so no schema or CEL rule was evaluated.
	StrictDecoding bool
}

// RejectionOf extracts the causes from an API server's error. Only validation rejections qualify: 422 Invalid with
// causes, or 400 BadRequest from strict decoding; any other error (or none) is returned as an error that says what
// the server did instead.
func RejectionOf(err error) (*Rejection, error) {
	if err == nil {
		return nil, errors.New("the API server accepted the request")
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return nil, fmt.Errorf("the request failed without an API status: %w", err)
	}
	s := status.Status()
	switch {
	case s.Reason == metav1.StatusReasonInvalid:
		if s.Details == nil || len(s.Details.Causes) == 0 {
			return nil, fmt.Errorf("the API server rejected the request as invalid without causes: %w", err)
		}
		r := &Rejection{}
		for _, c := range s.Details.Causes {
			r.Causes = append(r.Causes, Cause{Field: c.Field, Message: c.Message})
		}
		return r, nil
	case s.Code == http.StatusBadRequest && strings.Contains(s.Message, strictDecodingMarker):
		_, list, _ := strings.Cut(s.Message, strictDecodingMarker)
		causes, err := parseStrictDecodingErrors(list)
		if err != nil {
			return nil, err
		}
		return &Rejection{Causes: causes, StrictDecoding: true}, nil
	default:
		return nil, fmt.Errorf("the request failed, but not with a validation error (reason %q, code %d): %w", s.Reason, s.Code, err)
	}
}

// parseStrictDecodingErrors parses `unknown field "a", duplicate field "b"` into causes whose field is the path
// and whose message is the server's own text for it. Anything else in the message is an error, so that no
// reason goes unnoticed.
func parseStrictDecodingErrors(message string) ([]Cause, error) {
	var causes []Cause
	var parts []string
	for _, m := range strictDecodingErrorRE.FindAllStringSubmatch(message, -1) {
		causes = append(causes, Cause{Field: m[2], Message: m[0]})
		parts = append(parts, m[0])
	}
	if len(causes) == 0 || strings.Join(parts, ", ") != message {
		return nil, fmt.Errorf("can't parse strict decoding errors %q: want a list of `unknown field \"<path>\"` or `duplicate field \"<path>\"`", message)
	}
	return causes, nil
}

// HarnessCauses converts pkg/crdvalidation's errors into the causes an API server gives for the same manifest.
// The harness reports an unknown field as "<path>: Forbidden: unknown field" among the other errors, while the
// server (with fieldValidation=Strict) rejects the request with `unknown field "<path>"` before validating
// anything; when strictDecoding is set, only the unknown fields are kept.
func HarnessCauses(errs field.ErrorList, strictDecoding bool) []Cause {
	var causes []Cause
	for _, err := range errs {
		if err.Type == field.ErrorTypeForbidden && err.Detail == "unknown field" {
			causes = append(causes, Cause{Field: err.Field, Message: fmt.Sprintf("unknown field %q", err.Field)})
			continue
		}
		if !strictDecoding {
			causes = append(causes, Cause{Field: err.Field, Message: err.ErrorBody()})
		}
	}
	return causes
}

// Unmet returns a line for every expectation no cause satisfies and for every cause no expectation explains,
// apart from the "rules not checked" consequence. Unknown fields are matched by the server's wording,
// `unknown field "<path>"`, which contains the harness's expectation "unknown field".
func (r *Rejection) Unmet(expectations []crdvalidation.Expectation) []string {
	var problems []string
	for _, e := range expectations {
		matched := false
		for _, c := range r.Causes {
			if e.MatchesError(c.Field, c.Message) {
				matched = true
				break
			}
		}
		if !matched {
			problems = append(problems, fmt.Sprintf("no cause matches %q", e.String()))
		}
	}
	for _, c := range r.Causes {
		if strings.Contains(c.Message, RulesNotCheckedMessage) {
			continue
		}
		expected := false
		for _, e := range expectations {
			if e.MatchesError(c.Field, c.Message) {
				expected = true
				break
			}
		}
		if !expected {
			problems = append(problems, fmt.Sprintf("unexpected cause %q", c.String()))
		}
	}
	return problems
}

// DiffWithHarness compares the server's causes with pkg/crdvalidation's errors for the same request, ignoring
// order, and returns a cmp diff (-apiserver +crdvalidation), empty when they agree.
func (r *Rejection) DiffWithHarness(harnessErrs field.ErrorList) string {
	return cmp.Diff(sortedCauses(r.Causes), sortedCauses(HarnessCauses(harnessErrs, r.StrictDecoding)))
}

// String lists the causes, one per line.
func (r *Rejection) String() string {
	var lines []string
	if r.StrictDecoding {
		lines = append(lines, "(rejected by strict decoding, before validation)")
	}
	for _, c := range r.Causes {
		lines = append(lines, "  "+c.String())
	}
	return strings.Join(lines, "\n")
}

func sortedCauses(causes []Cause) []Cause {
	out := append([]Cause(nil), causes...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Field != out[j].Field {
			return out[i].Field < out[j].Field
		}
		return out[i].Message < out[j].Message
	})
	return out
}
