package controllerhelpers

// errorString is err's message, empty for no error, so that tests compare errors with cmp.Diff like any value.
func errorString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
