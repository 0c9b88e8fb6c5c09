// Package validation holds every rule the API's CRD schemas can't express. The admission webhook and the
// controllers call the same functions, so a controller never acts on an object the webhook would refuse (for
// example one created while the webhook was down).
//
// Each kind has three functions: Validate<Kind> checks an object on its own, Validate<Kind>Update additionally
// checks what may not change, and WarningsFor<Kind> lists deprecated fields in use. Errors are returned all
// together, each naming the field path and what is expected.
package validation
