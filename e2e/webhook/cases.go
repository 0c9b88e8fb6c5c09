package webhook

import (
	"errors"
	"fmt"
	"strings"

	"github.com/scyllakube/scylla-operator/e2e/crds"
	"github.com/scyllakube/scylla-operator/pkg/crdvalidation"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// InvalidCasesDir holds the manifests that only the webhook refuses, relative to this package's directory. Each file
// is one document with at least one "# expect: <field path>: <message substring>" line; the webhook must report
// exactly the causes they describe.
const InvalidCasesDir = "testdata/invalid"

// WebhookName is the name of the webhook of deploy/operator's ValidatingWebhookConfiguration; the API server
// names it in every error about the webhook.
const WebhookName = naming.WebhookValidatingName

// LoadInvalidCases loads the cases of dir and checks their shape.
func LoadInvalidCases(dir string) ([]crdvalidation.Case, error) {
	cases, err := crdvalidation.LoadCases(dir)
	if err != nil {
		return nil, err
	}
	for _, c := range cases {
		if len(c.Documents) != 1 || len(c.Expectations) == 0 {
			return nil, fmt.Errorf("case %s of %s: want one document and at least one %q line, got %d documents and %d expectations",
				c.Name, dir, crdvalidation.ExpectPrefix, len(c.Documents), len(c.Expectations))
		}
	}
	return cases, nil
}

// CheckWebhookRejection returns what is wrong with err as the webhook's refusal of a case: it must be the API
// server's Invalid error with exactly the causes the expectations describe, and, when throughAPIServer, say that
// the webhook denied the request.
func CheckWebhookRejection(err error, expectations []crdvalidation.Expectation, throughAPIServer bool) error {
	rejection, rerr := crds.RejectionOf(err)
	if rerr != nil {
		return rerr
	}
	var problems []string
	if rejection.StrictDecoding {
		problems = append(problems, "it was refused while decoding, not by the webhook")
	}
	if deniedBy := fmt.Sprintf("admission webhook %q denied the request", WebhookName); throughAPIServer && !strings.Contains(err.Error(), deniedBy) {
		problems = append(problems, fmt.Sprintf("the message does not say %q", deniedBy))
	}
	problems = append(problems, rejection.Unmet(expectations)...)
	if len(problems) != 0 {
		return errors.New(strings.Join(problems, "\n") + "\ncauses:\n" + rejection.String())
	}
	return nil
}
